"""Ops that join a lab's parts on two sites: a kernel VXLAN device at each end of a link between sites."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from vtopo.ops.base import Op, dev_resource, ns_resource
from vtopo.ops.host import Host
from vtopo.ops.netdev import DeleteLink


@dataclass(frozen=True, kw_only=True)
class CreateVxlan(Op):
    """A VXLAN device carrying one link to another site over the underlay. It is made from the host's namespace,
    where its UDP socket stays, and put straight into `netns` under its name there when a node's interface is the
    tunnel itself; it then goes with that namespace."""

    name: str
    netns: str | None
    vni: int
    local: str
    remote: str
    port: int
    mtu: int
    summary_text: ClassVar[str] = "tunnel {name} to {remote}, VXLAN VNI {vni}"

    def requires(self) -> frozenset[str]:
        return frozenset({ns_resource(self.netns)})

    def provides(self) -> frozenset[str]:
        return frozenset({dev_resource(self.netns, self.name)})

    def apply(self, host: Host) -> None:
        host.add_vxlan(self.name, self.netns, vni=self.vni, local=self.local, remote=self.remote, port=self.port,
                       mtu=self.mtu)

    def inverse(self) -> Op | None:
        return None if self.netns else DeleteLink(owner=self.owner, name=self.name)
