"""Labs whose nodes run from OCI images (vtopo's own toolbox and FRR images, built once and kept in the image store),
and what the engine could leave on the host."""
from __future__ import annotations

from vtopo.host import image_build, oci_engine
from vtopo.model.topology import Node, Topology
from wiring import wire

RUN_ROOT = "/run/vtopo"
TOOLBOX, FRR = "vtopo/toolbox", "vtopo/frr"


def own_images() -> None:
    """vtopo's toolbox and FRR images in the shared store: built once (scripts/setup.sh builds them), kept after."""
    for name in ("toolbox", "frr"):
        image_build.build(name)


def mixed_lab(name: str) -> Topology:
    """t1 (toolbox image) - r1 (FRR image) - r2 (the host's FRR) - h2 (a namespace-only container), running OSPF."""
    topology = Topology(name=name)
    for node, kind, settings in (("t1", "container", {"image": TOOLBOX, "default_route": "10.1.0.1"}),
                                 ("r1", "router", {"image": FRR}), ("r2", "router", {}),
                                 ("h2", "container", {"default_route": "10.2.0.1"})):
        topology.add_node(Node(id=node, name=node, kind=kind, settings=settings))
    return wire(topology, ("t1:eth0", "r1:eth0", "10.1.0.10/24", "10.1.0.1/24"),
                ("r1:eth1", "r2:eth1", "10.0.12.1/30", "10.0.12.2/30"),
                ("r2:eth0", "h2:eth0", "10.2.0.1/24", "10.2.0.10/24"))


def engine_leftovers() -> list[str]:
    """runc's containers of vtopo's, bundle mounts and cgroups: what destroy must leave none of."""
    return oci_engine.leftovers(RUN_ROOT)

