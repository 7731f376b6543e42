"""Applies single ops to the host: netlink for the kernel, ovs-vsctl for OVS, processes for daemons.

`apply` creates; `undo` removes and does not mind when the object is already gone, so destroy and
cleanup can run any number of times.
"""
from __future__ import annotations

import errno
import os
import shutil
import time
from pathlib import Path
from typing import Callable

from vtopo import ops as o
from vtopo.host import netns as namespaces
from vtopo.host import nftables, ovs, owned_files, processes
from vtopo.host.images import open_image
from vtopo.host.netlink import Netlink, NetlinkError

DAEMON_START_SECONDS = 15.0
LINGER_SECONDS = 30.0
TAG_PREFIX = "vtopo:"


class OpFailed(Exception):
    """An op the host refused. Names the op, its owner, and what the host said."""

    def __init__(self, op: o.Op, reason: str):
        self.op = op
        self.reason = reason
        super().__init__(f"{op.owner}: could not {op.summary()}: {reason}")


def _absent(error: NetlinkError) -> bool:
    return any(word in error.kernel_message for word in ("No such device", "Cannot find device", "No such file"))


class Applier:
    def __init__(self, tag: str):
        self.tag = tag
        self.netlink = Netlink()
        self._apply: dict[type[o.Op], Callable[[o.Op], None]] = {
            o.CreateNamespace: self._create_namespace,
            o.CreateBridge: lambda op: self.netlink.add_bridge(op.name, None, op.stp, op.forward_delay_s, op.ageing_s),
            o.CreateVeth: lambda op: self.netlink.add_veth(op.name, op.netns, op.peer, op.peer_netns),
            o.CreateMacvlan: lambda op: self.netlink.add_macvlan(op.name, op.netns, op.lower, op.lower_netns, op.mode),
            o.CreateMacvtap: lambda op: self.netlink.add_macvtap(op.name, op.lower, None, op.mode),
            o.CreateTap: lambda op: self.netlink.add_tap(op.name, None),
            o.SetMaster: self._set_master,
            o.ConfigureLink: lambda op: self.netlink.set_link(op.name, op.netns, mtu=op.mtu or None, mac=op.mac or None,
                                                              alias=op.alias or None, up=op.up),
            o.AddAddress: lambda op: self.netlink.add_address(op.name, op.netns, op.cidr),
            o.AddRoute: lambda op: self.netlink.add_route(op.netns, op.destination, op.gateway),
            o.SetSysctl: lambda op: self.netlink.set_sysctl(op.netns, op.key, op.value),
            o.SetImpairment: lambda op: self.netlink.set_impairment(
                op.name, op.netns, delay_ms=op.delay_ms, jitter_ms=op.jitter_ms, loss_pct=op.loss_pct,
                rate_mbit=op.rate_mbit),
            o.SetTxChecksum: lambda op: self.netlink.set_tx_checksum(op.name, op.netns, op.enabled),
            o.OvsAddFlows: lambda op: ovs.add_flows(op.bridge, list(op.flows)),
            o.MakeDirectory: self._make_directory,
            o.WriteFile: lambda op: owned_files.write_file(op.path, op.content),
            o.StartProcess: self._start_process,
            o.ContainForwarding: lambda op: nftables.contain_forwarding(op.table, op.device_prefix),
        }
        self._undo: dict[type[o.Op], Callable[[o.Op], None]] = {
            o.DeleteNamespace: self._delete_namespace,
            o.DeleteLink: self._delete_link,
            o.OvsDeleteBridge: lambda op: ovs.vsctl([["--if-exists", "del-br", op.name]]),
            o.RemoveDirectory: lambda op: shutil.rmtree(op.path, ignore_errors=True),
            o.RemoveFile: lambda op: Path(op.path).unlink(missing_ok=True),
            o.StopProcess: self._stop_process,
            o.RemoveNftTable: lambda op: nftables.delete_table(op.table),
        }

    def close(self) -> None:
        self.netlink.close()

    # ------------------------------------------------------------ dispatch

    def apply(self, op: o.Op) -> None:
        try:
            self._apply[type(op)](op)
        except (NetlinkError, ovs.OvsError, processes.DaemonError, nftables.NftError, OSError, ValueError) as error:
            raise OpFailed(op, _reason(error)) from error

    def undo(self, op: o.Op) -> None:
        try:
            self._undo[type(op)](op)
        except (NetlinkError, ovs.OvsError, nftables.NftError, OSError) as error:
            raise OpFailed(op, _reason(error)) from error

    def apply_ovs_batch(self, batch: list[o.Op]) -> None:
        """Bridges and ports in one ovs-vsctl transaction: all of them are made, or none."""
        commands: list[list[str]] = []
        for op in batch:
            tag = ovs.lab_tag_setting(self.tag)
            if isinstance(op, o.OvsAddBridge):
                commands += [["add-br", op.name], ["set", "Bridge", op.name, f"datapath_type={op.datapath}",
                                                   f"fail_mode={op.fail_mode}", tag]]
            elif isinstance(op, o.OvsAddPort):
                interface = ["set", "Interface", op.name, f"ofport_request={op.ofport}", tag]
                if op.port_type:
                    interface.append(f"type={op.port_type}")
                commands += [["add-port", op.bridge, op.name], ["set", "Port", op.name, tag], interface]
        try:
            ovs.vsctl(commands)
        except ovs.OvsError as error:
            raise OpFailed(batch[0], _reason(error)) from error

    def exists(self, op: o.Op) -> bool | None:
        """Whether what `op` made is there now; None for ops that make nothing worth probing."""
        if isinstance(op, o.CreateNamespace):
            return op.name in namespaces.list_netns()
        if isinstance(op, (o.CreateBridge, o.CreateMacvtap, o.CreateTap)):
            return self.netlink.link_exists(op.name, None)
        if isinstance(op, o.OvsAddBridge):
            return ovs.OvsService().running() and op.name in ovs.vsctl([["list-br"]]).split()
        if isinstance(op, o.ContainForwarding):
            return op.table in nftables.tables()
        if isinstance(op, o.StartProcess):
            pid = _read_pid(Path(op.pid_file))
            return pid is not None and processes.process_alive(pid, Path(op.argv[0]).name)
        return None

    def wait_gone(self, host_links: list[str], timeout_s: float = LINGER_SECONDS) -> list[str]:
        """Namespaces die asynchronously; wait until the host ends of their veths are gone. Returns stragglers."""
        pending = set(host_links)
        deadline = time.monotonic() + timeout_s
        while pending:
            pending &= {link.name for link in self.netlink.links(None)}
            if not pending or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        return sorted(pending)

    # ------------------------------------------------------------ handlers

    def _create_namespace(self, op: o.Op) -> None:
        assert isinstance(op, o.CreateNamespace)
        namespaces.create_netns(op.name)
        self.netlink.set_link("lo", op.name, up=True, alias=f"{TAG_PREFIX}{self.tag}")

    def _delete_namespace(self, op: o.Op) -> None:
        assert isinstance(op, o.DeleteNamespace)
        self.netlink.release(op.name)
        try:
            namespaces.delete_netns(op.name)
        except namespaces.NetnsNotFoundError:
            pass

    def _delete_link(self, op: o.Op) -> None:
        assert isinstance(op, o.DeleteLink)
        try:
            self.netlink.delete_link(op.name, op.netns)
        except NetlinkError as error:
            if not _absent(error):
                raise

    def _set_master(self, op: o.Op) -> None:
        assert isinstance(op, o.SetMaster)
        self.netlink.set_master(op.name, None, op.master)
        if op.hairpin:
            self.netlink.set_hairpin(op.name, None, True)

    def _make_directory(self, op: o.Op) -> None:
        assert isinstance(op, o.MakeDirectory)
        path = Path(op.path)
        path.mkdir(parents=True, exist_ok=False)
        if op.user:
            shutil.chown(path, op.user, op.user)

    def _start_process(self, op: o.Op) -> None:
        assert isinstance(op, o.StartProcess)
        taps = {fd: Path(f"/dev/tap{self.netlink.index(interface, None)}") for fd, interface in op.tap_fds}
        private: dict[Path, Path] = {}
        for target, source in op.private_dirs:
            if Path(target).is_dir():  # a bind mount needs its target to exist
                owned_files.private_directory(source, str(Path(source).parent))
                private[Path(target)] = Path(source)
        images: dict[int, int] = {}
        try:
            for fd, path in op.image_fds:
                images[fd] = open_image(path)
            processes.start_daemon(list(op.argv), op.netns, Path(op.pid_file),
                                   Path(op.ready_path) if op.ready_path else None, DAEMON_START_SECONDS,
                                   log_file=Path(op.pid_file).with_suffix(".log"), private_dirs=private,
                                   open_files=taps, inherited_fds=images)
        finally:
            for ours in images.values():
                os.close(ours)

    def _stop_process(self, op: o.Op) -> None:
        assert isinstance(op, o.StopProcess)
        pid = _read_pid(Path(op.pid_file))
        if pid is not None:
            processes.stop_process(pid, Path(op.match).name)


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.errno is not None and not isinstance(error, NetlinkError):
        return f"{os.strerror(error.errno)} ({errno.errorcode.get(error.errno, error.errno)})" + (
            f": {error.filename}" if error.filename else "")
    return str(error)
