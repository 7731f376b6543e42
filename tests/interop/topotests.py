"""FRR's topotests as vtopo labs: each topotest's switches become bridges, its routers vtopo routers whose
configuration is the topotest's per-daemon files joined verbatim into one integrated frr.conf, and its interface names
the routers' interface names. `python -m tests.interop.topotests` writes the labs (tests/interop/*.vtopo)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtopo.model import io
from vtopo.model.topology import Endpoint, Interface, Link, Node, Position, Topology

HERE = Path(__file__).parent
DAEMON_FILES = ("zebra.conf", "ospfd.conf", "ospf6d.conf", "bgpd.conf")  # in the order vtysh -b sends them


@dataclass(frozen=True)
class Topotest:
    """A topotest's topology (each switch with the (router, interface) pairs on it) and the JSON each router's
    command must match, by expected file."""

    name: str
    prefix: str
    switches: dict[str, list[tuple[str, str]]]
    expected: dict[str, str]  # file name -> vtysh command

    @property
    def routers(self) -> list[str]:
        return sorted({router for members in self.switches.values() for router, _ in members})

    def config(self, router: str) -> str:
        """The router's daemon files, verbatim, one after the other."""
        return "".join((HERE / self.name / router / name).read_text() for name in DAEMON_FILES
                       if (HERE / self.name / router / name).exists())

    def expected_json(self, router: str, file: str) -> Any:
        path = HERE / self.name / router / file
        return json.loads(path.read_text()) if path.exists() else None

    def lab(self) -> Topology:
        topology = Topology(name=f"topotest-{self.name.replace('_', '-')}", id=f"lab-{self.prefix}", prefix=self.prefix,
                            notes=f"FRR's topotest {self.name} (tests/topotests/{self.name} in FRR 8.4.4), "
                                  "translated by tests/interop/topotests.py: see tests/interop/README.md.")
        for index, router in enumerate(self.routers):
            topology.add_node(Node(id=router, name=router, kind="router", settings={"config": self.config(router)},
                                   position=Position(160.0 * index, 0.0)))
        ports: dict[str, int] = {}
        for index, (switch, members) in enumerate(sorted(self.switches.items())):
            topology.add_node(Node(id=switch, name=switch, kind="bridge", position=Position(160.0 * index, 220.0)))
            for number, (router, interface) in enumerate(members, 1):
                port = f"eth{ports.setdefault(router, 0)}"
                ports[router] += 1
                topology.add_link(Link(id=f"{router}-{interface}", a=Endpoint(router, port, Interface(name=interface)),
                                       b=Endpoint(switch, f"p{number}")))
        return topology

    @property
    def path(self) -> Path:
        return HERE / f"{self.name}.vtopo"


def switches(*lines: str) -> dict[str, list[tuple[str, str]]]:
    """Switches written "s1 rt1:eth-rt2 rt2:eth-rt1": the switch, then each router:interface on it."""
    parsed: dict[str, list[tuple[str, str]]] = {}
    for line in lines:
        switch, *members = line.split()
        parsed[switch] = [(member.partition(":")[0], member.partition(":")[2]) for member in members]
    return parsed


GR_SWITCHES = switches("s1 rt1:eth-rt2 rt2:eth-rt1", "s2 rt1:stub1", "s3 rt2:eth-rt3 rt3:eth-rt2",
                       "s4 rt3:eth-rt4 rt4:eth-rt3", "s5 rt3:eth-rt6 rt6:eth-rt3", "s6 rt4:eth-rt5 rt5:eth-rt4",
                       "s7 rt6:eth-rt7 rt7:eth-rt6", "s8 rt7:stub1")

TOPOTESTS = (
    Topotest("ospf_gr_topo1", "vtog", GR_SWITCHES,
             {"show_ip_route.json": "show ip route ospf json",
              "show_ip_ospf_neighbor.json": "show ip ospf neighbor json"}),
    Topotest("ospf6_gr_topo1", "vto6", GR_SWITCHES,
             {"show_ipv6_route.json": "show ipv6 route ospf json",
              "show_ipv6_ospf_neighbor.json": "show ipv6 ospf neighbor json"}),
    Topotest("bgp_ipv6_rtadv", "vtbr", switches("s1 r1:r1-eth0 r2:r2-eth0"),
             {"ipv4_routes.json": "show ip route json", "ipv6_routes.json": "show ipv6 route json"}),
)
OSPF_TOPO1 = Topotest("ospf_topo1", "vto1", switches("s1 r1:r1-eth0", "s2 r2:r2-eth0",
                                                     "s3 r1:r1-eth1 r2:r2-eth1 r3:r3-eth0", "s4 r3:r3-eth1",
                                                     "s5 r3:r3-eth2 r4:r4-eth0", "s6 r4:r4-eth1"), {})
"""Its expected outputs are text, not JSON (`show ip ospf route`, `show ipv6 ospf6 route`), and its configurations
hold 24 lines FRR 8.4 skips: test_lenient_frr.py deploys it."""


def json_cmp(output: Any, expected: Any, where: str = "$") -> list[str]:
    """How `output` fails to hold `expected`, as topotests compare (nothing when it holds it): every key expected is
    there with a matching value (a key expected as null must be absent), each element of an expected list matches an
    element of the output's, and plain values are equal."""
    if isinstance(expected, dict):
        if not isinstance(output, dict):
            return [f"{where}: expected an object, got {json.dumps(output)[:80]}"]
        differences = []
        for key, value in expected.items():
            if value is None:
                differences += [f"{where}.{key}: present, expected absent"] if key in output else []
            elif key not in output:
                differences.append(f"{where}.{key}: missing")
            else:
                differences += json_cmp(output[key], value, f"{where}.{key}")
        return differences
    if isinstance(expected, list):
        if not isinstance(output, list):
            return [f"{where}: expected a list, got {json.dumps(output)[:80]}"]
        return [f"{where}[{index}]: no element matches {json.dumps(value)[:120]}" for index, value in enumerate(expected)
                if not any(not json_cmp(item, value) for item in output)]
    return [] if output == expected else [f"{where}: {json.dumps(output)} is not {json.dumps(expected)}"]


if __name__ == "__main__":
    for topotest in (*TOPOTESTS, OSPF_TOPO1):
        io.save(topotest.lab(), topotest.path)
        print(f"wrote {topotest.path}")
