"""Ops that start and stop the lab's long-running processes (routing daemons, QEMU), and run its startup commands."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar

from vtopo.model.rules import Place
from vtopo.ops.base import Op, ns_resource
from vtopo.ops.namespaces import node_resource
from vtopo.ops.host import Host

VHOST_DEVICE = "/dev/vhost-net"


@dataclass(frozen=True, kw_only=True)
class StartProcess(Op):
    """A long-running process inside a namespace (zebra, ospfd, qemu).

    `user`, when set, is who the process runs as from its first instruction: that user, its group and `groups`
    only, no capabilities (an empty bounding set), no_new_privs, and umask 077. Such a process stays in the
    foreground (under its sandbox it could not daemonize), in a session of its own. Root opens everything it needs
    first and hands the descriptors over:
    `tap_fds` maps a file descriptor number to a macvtap interface whose /dev/tapN the process gets on that fd.
    `tun_fds` maps a file descriptor number to a tap interface: /dev/net/tun attached to it (TUNSETIFF).
    `device_fds` maps a file descriptor number to a character device opened read-write (/dev/vhost-net).
    `image_fds` maps a file descriptor number to a disk image that vtopo opens read-only (a regular file, never
    through a symlink) and hands over on that fd, so the process never opens a path itself.
    `ready_banner`: the process is ready once `ready_path` is a socket that says this first (QEMU's QMP greeting).
    `after` lists extra resources that must exist first (the interfaces a daemon should see at start).
    `directory`, when set, is its working directory: a file its configuration names without a path lands there.
    `enter`, when set, are the words that put the process into its node, as `vtopo exec` enters it (nsenter into the
    node's network, mount and UTS namespaces, and into the lab's user namespace as its root where the lab has one,
    ending in "--"): it sees the node's own files, and `directory` is a path inside the node.
    """

    name: str
    argv: tuple[str, ...]
    netns: str | None
    pid_file: str
    ready_path: str = ""
    ready_banner: str = ""
    user: str = ""
    groups: tuple[str, ...] = ()
    tap_fds: tuple[tuple[int, str], ...] = ()
    tun_fds: tuple[tuple[int, str], ...] = ()
    device_fds: tuple[tuple[int, str], ...] = ()
    image_fds: tuple[tuple[int, str], ...] = ()
    after: tuple[str, ...] = ()
    directory: str = ""
    enter: tuple[str, ...] = ()
    summary_text: ClassVar[str] = "start {name}"
    waiting_text: ClassVar[str] = "starting {name}: waiting until it is ready"

    def requires(self) -> frozenset[str]:
        node = (node_resource(self.netns),) if self.enter and self.netns else ()
        return frozenset({ns_resource(self.netns), f"file:{self.pid_file.rsplit('/', 1)[0]}", *node, *self.after})

    def provides(self) -> frozenset[str]:
        return frozenset({f"process:{self.name}"})

    def apply(self, host: Host) -> None:
        host.start_process(argv=self.argv, netns=self.netns, pid_file=self.pid_file, ready_path=self.ready_path,
                           ready_banner=self.ready_banner, user=self.user, groups=self.groups, tap_fds=self.tap_fds,
                           tun_fds=self.tun_fds, device_fds=self.device_fds, image_fds=self.image_fds,
                           directory=self.directory, enter=self.enter)

    def inverse(self) -> Op:
        return StopProcess(owner=self.owner, name=self.name, pid_file=self.pid_file, match=self.argv[0],
                           netns=self.netns)


@dataclass(frozen=True, kw_only=True)
class StopProcess(Op):
    """Stop the process whose pid `pid_file` holds, when its command line holds `match` and, with `netns`, it runs in
    that network namespace (a pid file the lab's own user may write names no process of anyone else's)."""

    name: str
    pid_file: str
    match: str
    netns: str | None = None
    summary_text: ClassVar[str] = "stop {name}"

    def apply(self, host: Host) -> None:
        host.stop_process(self.pid_file, self.match, self.netns)


class Signal(StrEnum):
    """What a node's processes are sent: STOP freezes them (a stopped node), CONT resumes them, KILL ends them."""

    STOP = "STOP"
    CONT = "CONT"
    KILL = "KILL"


@dataclass(frozen=True, kw_only=True)
class SignalProcesses(Op):
    """Every process running in the node's namespace `netns` sent `signal`; KILL again until none is left, since one
    may fork while the others die (a node restarted afresh)."""

    netns: str
    signal: Signal
    summary_text: ClassVar[str] = "send SIG{signal} to every process in {netns}"

    def apply(self, host: Host) -> None:
        host.signal_processes(self.netns, self.signal)


@dataclass(frozen=True, kw_only=True)
class LoadConfig(Op):
    """A node's daemons, once started, given their configuration by a shell of theirs run inside the node, as the
    daemons' own user (FRR's `vtysh -b` reads the integrated frr.conf and sends each daemon its part); `argv` enters
    the node. It is what starts the node's routing, so a restarted node loads it again. Like FRR's own service, it
    goes on past the lines FRR skips, and says how many it skipped."""

    node: str
    netns: str
    argv: tuple[str, ...]
    after: tuple[str, ...] = ()
    summary_text: ClassVar[str] = "load the configuration of {node}"

    def requires(self) -> frozenset[str]:
        return frozenset({ns_resource(self.netns), *self.after})

    def apply(self, host: Host) -> None:
        host.load_config(self.argv)


@dataclass(frozen=True, kw_only=True)
class ReadState(Op):
    """A command that shows what a running node has become, run inside it for `vtopo save`: `command` is one of its
    kind's `state_commands`, `argv` runs it in the node (the kind's command_in). What it prints the kind reads its
    state from. It changes nothing on the host, so nothing undoes it."""

    node: str
    command: str
    argv: tuple[str, ...]
    summary_text: ClassVar[str] = "read what {node} runs now: {command}"

    def apply(self, host: Host) -> None:
        host.read_state(self.node, self.argv)


@dataclass(frozen=True, kw_only=True)
class RunCommand(Op):
    """A startup command of a node, run once the whole lab is built (the compiler puts these last); its output goes to
    the deploy log, and a non-zero exit fails the deploy. `argv` runs `command` at its `place` (the kind's
    command_in). What it leaves running in a node ends with the node's namespaces."""

    node: str
    command: str
    argv: tuple[str, ...]
    place: Place = Place.HOST
    summary_text: ClassVar[str] = "run on {node}: {command}"

    def apply(self, host: Host) -> None:
        host.run_command(self.node, self.argv, self.place)
