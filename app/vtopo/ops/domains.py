"""Ops that start and destroy the lab's VMs as libvirt domains."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from vtopo.ops.base import Op, heredoc, sh

DOMAIN_XMLNS = "https://vtopo.dev/xmlns/libvirt-domain/1"
"""The namespace of the <metadata> element that tags a libvirt domain as a lab's (its prefix and node id)."""
LIBVIRT_QEMU_RUN_DIR = "/run/libvirt/qemu"  # where libvirtd (qemu:///system) keeps each domain's QEMU <name>.pid


@dataclass(frozen=True, kw_only=True)
class StartDomain(Op):
    """A transient libvirt domain (createXML): destroying it leaves no definition behind, and one that outlives a
    crashed vtopo is found again by the vtopo <metadata> in its XML. `vhost` is the driver asked for, which the
    host layer checks against what QEMU really holds."""

    name: str
    uri: str
    xml: str
    vhost: bool
    after: tuple[str, ...] = ()
    summary_text: ClassVar[str] = "start libvirt domain {name}"

    def requires(self) -> frozenset[str]:
        return frozenset(self.after)

    def provides(self) -> frozenset[str]:
        return frozenset({f"domain:{self.name}"})

    def explain(self) -> list[str]:
        return heredoc(sh("virsh", "-c", self.uri, "create", "/dev/stdin"), self.xml)

    def inverse(self) -> Op:
        return DestroyDomain(owner=self.owner, name=self.name, uri=self.uri)


@dataclass(frozen=True, kw_only=True)
class DestroyDomain(Op):
    name: str
    uri: str
    summary_text: ClassVar[str] = "destroy libvirt domain {name}"

    def explain(self) -> list[str]:
        return [sh("virsh", "-c", self.uri, "destroy", self.name)]
