"""Applies ops to the host: each op asks a KernelHost for what it does (the same asking that writes the explained
script on a ScriptHost); what the host refuses becomes OpFailed, naming the op.

`apply` creates; `undo` applies an op's inverse, which does not mind when the object is already gone, so destroy
and cleanup can run any number of times.
"""
from __future__ import annotations

import errno
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterable

from vtopo import ops as o
from vtopo.host import netns as namespaces
from vtopo.host import libvirt_domains, nftables, ovs, owned_files, processes
from vtopo.host.errors import HostError, os_error_line
from vtopo.host.kernel_host import KernelHost, read_pid
from vtopo.host.netlink import Netlink, NetlinkError

LINGER_SECONDS = 2.0
TOGETHER = 4  # threads that apply ops together: each mostly waits for the process it started (runc)


class OpFailed(Exception):
    """An op the host refused. Names the op, its owner, and what the host said."""

    def __init__(self, op: o.Op, reason: str):
        self.op = op
        self.reason = reason
        super().__init__(f"{op.owner}: could not {op.summary()}: {reason}")


OutputCallback = Callable[[o.RunCommand, str], None]


def _ignore_output(_op: o.RunCommand, _text: str) -> None:
    pass


class Applier:
    """Applies the ops of the lab tagged `tag`, deployed by uid `owner`, on a KernelHost of its own."""

    def __init__(self, tag: str, on_output: OutputCallback = _ignore_output, owner: int = 0):
        self.tag = tag
        self.kernel = KernelHost(tag, owner)
        self.notices: list[str] = []  # what the user should know about ops that did not do all they were asked
        self.on_output = on_output  # what a startup command printed, for the deploy log

    @property
    def netlink(self) -> Netlink:
        return self.kernel.netlink

    def close(self) -> None:
        self.kernel.close()

    # ------------------------------------------------------------ dispatch

    def apply(self, op: o.Op) -> None:
        try:
            self._apply_unreported(op)
        finally:
            self._report(op)

    def _apply_unreported(self, op: o.Op) -> None:
        try:
            op.apply(self.kernel)
        except (HostError, libvirt_domains.DomainError, nftables.NftError, OSError, ValueError) as error:
            raise OpFailed(op, _reason(error)) from error

    def put_back(self, op: o.Op) -> None:
        """Apply `op`, an address or a route of an interface that came up again (the kernel drops an interface's
        routes and IPv6 addresses when it goes down). One still there (an IPv4 address survives), or a route via a
        link still down (it comes back with that link), is no failure."""
        try:
            self.apply(op)
        except OpFailed as failure:
            refusal = failure.__cause__
            if not isinstance(refusal, NetlinkError) or refusal.code not in (errno.EEXIST, errno.ENETUNREACH):
                raise

    def read_state(self, op: o.ReadState) -> str:
        """What the command of `op` printed in its node (`vtopo save`); OpFailed when it failed."""
        self.apply(op)
        return self.kernel.shown.pop()

    def undo(self, op: o.Op) -> None:
        """Apply `op`, the inverse of an op applied earlier."""
        try:
            op.apply(self.kernel)
        except (NetlinkError, ovs.OvsError, libvirt_domains.DomainError, nftables.NftError, OSError) as error:
            raise OpFailed(op, _reason(error)) from error

    def _report(self, op: o.Op) -> None:
        """What the host had to tell about `op`: the notices, and what a startup command printed."""
        kernel = self.kernel
        if kernel.notices:
            self.notices += [f"{op.owner}: {notice}" for notice in kernel.notices]
            kernel.notices.clear()
        if kernel.printed:
            if isinstance(op, o.RunCommand):  # the only op whose host action prints
                for text in kernel.printed:
                    self.on_output(op, text)
            kernel.printed.clear()

    def apply_together(self, ops: list[o.Op]) -> None:
        """Ops that each wait on a process of their own (a node's container, started by the OCI engine), applied at
        once: the first alone (it makes what they share), the rest on a few threads. Each is applied whole or leaves
        nothing; the first failure is raised once all have ended. Their host actions tell nothing (no notice, no
        output), so the threads leave the host's reports alone."""
        self.apply(ops[0])
        with ThreadPoolExecutor(max_workers=TOGETHER, thread_name_prefix="vtopo apply") as pool:
            started = [pool.submit(self._apply_unreported, op) for op in ops[1:]]
        for each in started:
            each.result()

    def apply_ovs_batch(self, batch: list[o.Op]) -> None:
        """Bridges and ports in one ovs-vsctl transaction: all of them are made, or none."""
        try:
            self.kernel.one_ovs_transaction(batch)
        except ovs.OvsError as error:
            raise OpFailed(batch[0], _reason(error)) from error

    def expect(self, ops: list[o.Op]) -> None:
        """The ops about to be applied, in order (see KernelHost.expect)."""
        self.kernel.expect(ops)

    def delete_together(self, names: Iterable[str], namespace_files: Iterable[str]) -> None:
        """The network namespaces a teardown is going to delete, and the other namespaces' files it is going to
        remove (see KernelHost.delete_together)."""
        self.kernel.delete_together(names, namespace_files)

    def exists(self, op: o.Op) -> bool | None:
        """Whether what `op` made is there now; None for ops that make nothing worth probing."""
        if isinstance(op, o.CreateNamespace):
            return namespaces.netns_exists(op.name)
        if isinstance(op, (o.CreateBridge, o.CreateMacvtap, o.CreateTap)):
            return self._link_present(op.name, None)
        if isinstance(op, o.CreateVeth):
            return self._link_present(op.name, op.netns) and self._link_present(op.peer, op.peer_netns) and (
                not op.master or self._attached(op.name, op.master))
        if isinstance(op, (o.CreateMacvlan, o.CreateVxlan)):
            return self._link_present(op.name, op.netns)
        if isinstance(op, o.SetMaster):
            return self._attached(op.name, op.master)
        if isinstance(op, o.OvsAddBridge):
            return ovs.OvsService().running() and op.name in ovs.vsctl([["list-br"]]).split()
        if isinstance(op, o.ContainForwarding):
            return op.table in nftables.tables()
        if isinstance(op, o.OvsAddPort):
            try:
                return op.name in ovs.vsctl([["list-ports", op.bridge]]).split()
            except ovs.OvsError:  # OVS or the bridge is gone
                return False
        if isinstance(op, o.StartProcess):
            pid = read_pid(Path(op.pid_file))
            return pid is not None and processes.process_alive(pid, Path(op.argv[0]).name)
        if isinstance(op, o.StartDomain):
            return libvirt_domains.running(op.uri, op.name)
        return None

    def up(self, name: str, netns: str | None) -> bool:
        """Whether interface `name` is up with its carrier; False when it or its namespace is gone."""
        try:
            return self.netlink.link_up(name, netns)
        except NetlinkError:
            return False

    def _attached(self, port: str, bridge: str) -> bool:
        """Whether host interface `port` is a port of `bridge`."""
        try:  # one link at a time: a dump of the host's links for each port costs a lab of N ports N squared
            return self.netlink.master_index(port, None) == self.netlink.index(bridge, None)
        except NetlinkError:  # the port or its master is gone
            return False

    def _link_present(self, name: str, netns: str | None) -> bool:
        try:
            return self.netlink.link_exists(name, netns)
        except NetlinkError:  # its namespace is gone
            return False

    def remove_lingering(self, host_links: list[str]) -> list[str]:
        """Make sure the host ends of veths whose namespaces were deleted are gone. Returns those that stay.

        A deleted namespace dies, taking its veths, once nothing holds it any more; something can hold it
        for minutes (a socket of a process that ran there, still closing its TCP connections). After
        LINGER_SECONDS the host ends still present are deleted: a veth takes its peer with it."""
        lingering = self._wait_gone(host_links, LINGER_SECONDS)
        for name in lingering:
            self.undo(o.DeleteLink(owner=self.tag, name=name))
        return self._wait_gone(lingering, LINGER_SECONDS)

    def _wait_gone(self, host_links: list[str], timeout_s: float) -> list[str]:
        pending = set(host_links)
        deadline = time.monotonic() + timeout_s
        while pending:
            pending &= {link.name for link in self.netlink.links(None)}
            if not pending or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        return sorted(pending)


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError) and not isinstance(error, (NetlinkError, owned_files.Planted)):
        return os_error_line(error)
    return str(error)
