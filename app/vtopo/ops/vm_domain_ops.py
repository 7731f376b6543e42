"""Ops that start and destroy the lab's VMs as libvirt domains."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from vtopo.ops.base import Op
from vtopo.ops.host import Host

DOMAIN_XMLNS = "https://vtopo.dev/xmlns/libvirt-domain/1"
"""The namespace of the <metadata> element that tags a libvirt domain as a lab's (its prefix and node id)."""
LIBVIRT_QEMU_RUN_DIR = "/run/libvirt/qemu"  # where libvirtd (qemu:///system) keeps each domain's QEMU <name>.pid


@dataclass(frozen=True, kw_only=True)
class DomainOp(Op, register=False):
    """An op on the libvirt domain `name` at `uri`, done once the resources in `after` exist."""

    name: str
    uri: str
    after: tuple[str, ...] = ()

    def requires(self) -> frozenset[str]:
        return frozenset(self.after)


@dataclass(frozen=True, kw_only=True)
class StartDomain(DomainOp):
    """A transient libvirt domain (createXML), created paused (see ResumeDomain): destroying it leaves no definition
    behind, and one that outlives a crashed vtopo is found again by the vtopo <metadata> in its XML. `vhost` is the
    driver asked for, which the host layer checks against what QEMU really holds."""

    xml: str
    vhost: bool
    summary_text: ClassVar[str] = "start libvirt domain {name}"
    waiting_text: ClassVar[str] = ("starting libvirt domain {name}: waiting for libvirtd to set up QEMU (the first "
                                   "start on a host can take a minute while libvirt probes QEMU)")

    def provides(self) -> frozenset[str]:
        return frozenset({f"domain:{self.name}"})

    def apply(self, host: Host) -> None:
        host.start_domain(self.uri, self.name, self.xml, self.vhost)

    def inverse(self) -> Op:
        return DestroyDomain(owner=self.owner, name=self.name, uri=self.uri)


@dataclass(frozen=True, kw_only=True)
class ResumeDomain(DomainOp):
    """Let a domain's guest run, once every domain of the lab is created: libvirt sets up each new QEMU over many
    monitor calls, which take seconds while earlier guests boot beside it under emulation."""

    summary_text: ClassVar[str] = "resume libvirt domain {name}"
    waiting_text: ClassVar[str] = "resuming libvirt domain {name}: the guest starts to boot"

    def apply(self, host: Host) -> None:
        host.resume_domain(self.uri, self.name)


@dataclass(frozen=True, kw_only=True)
class DestroyDomain(DomainOp):
    summary_text: ClassVar[str] = "destroy libvirt domain {name}"

    def apply(self, host: Host) -> None:
        host.destroy_domain(self.uri, self.name)
