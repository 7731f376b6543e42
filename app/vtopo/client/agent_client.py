"""Talking to the agent: the one way the CLI and the designer reach the host, through an agent that listens or, for
root when none does, one this process runs (vtopo.client.in_process: the command line hands it over)."""
from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import stat
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from vtopo import protocol as p
from vtopo.client.in_process import local_agent, provided
from vtopo.client.terminal import relay_terminal, terminal_size
from vtopo.model.sites import Site
from vtopo.reports import DeployReport, LabEntry, LabStatus, LinkRate, ProgressCallback
from vtopo.ssh import REFUSED_EXIT, finish, ssh_argv, start_ssh

if TYPE_CHECKING:  # the designer and `vtopo status` import this module: the host layer loads when it runs something,
    # and a lab's model when a request carries one
    from vtopo.checkpoints import Restored
    from vtopo.deployed import DeployedLab
    from vtopo.lab_terms import Trust
    from vtopo.model.checkpoints import Checkpoint
    from vtopo.model.impairment_change import ImpairmentChange
    from vtopo.model.topology import Topology
    from vtopo.saving import RunningState


A = TypeVar("A")
T_co = TypeVar("T_co", covariant=True)
HANGUP_STATUS = 128 + signal.SIGHUP  # a command ended because nobody reads its output, as a shell reports it


class AgentUnavailable(Exception):
    """No agent listens on the socket."""


class AgentRefused(Exception):
    """The caller may not do this (not in the group, or not the lab's owner); the message is the line to print."""


class AgentError(Exception):
    """A request that failed; `result` holds the lines the agent sent (what the CLI prints)."""

    def __init__(self, result: p.Result) -> None:
        super().__init__("\n".join(line.removeprefix("error: ") for line in result.errors) or "the agent failed")
        self.result = result
        self.details = result.details
        self.rolled_back = bool(result.data.get("rolled_back"))  # a failed deploy's: the host is as it was


def exec_argv(lab: str, node: str, argv: list[str]) -> list[str]:
    """The argv that runs `argv` in a node through the agent (`vtopo exec`), as the calling user: how a client's
    measurements run their commands."""
    return [sys.executable, "-m", "vtopo", "exec", lab, node, "--", *argv]


def deployed_for(lab: str, action: str, client: AgentClient | None = None) -> DeployedLab:
    """The deployed lab as the caller may use it to `action` it (measure, check, capture on), learnt from the agent:
    lab records are root's alone. The caller must own it or be root (AgentRefused at once otherwise). Commands in a
    member's lab run through the agent, as the member, root's too: what they run is whatever the member put in the
    node. Root runs those in its own labs itself. A command in a node on another site runs there, through ssh and that
    site's `vtopo exec`. NotDeployed when there is no such lab."""
    from vtopo.deployed import DeployedLab, NotDeployed
    from vtopo.model.placement import remote_site

    client = client or AgentClient()
    client.require_owner(lab, action)
    try:
        deployed = DeployedLab.of_deployment(client.deployment(lab))
    except AgentError as error:
        raise NotDeployed(str(error)) from None
    topology, here = deployed.context.topology, deployed.context.trust.site
    in_own_lab = os.getuid() == 0 and not deployed.context.trust.owner.confined
    if in_own_lab and not topology.sites:
        return deployed

    def run(node: str, argv: list[str]) -> list[str]:
        if site := remote_site(topology, node, here):
            return ssh_argv(site, ["vtopo", "exec", topology.name, node, "--", *argv])
        if in_own_lab:
            return deployed.node(node).kind.command_in(deployed.node(node), argv)
        return exec_argv(topology.name, node, argv)

    return deployed.through(run)


def agent_running(path: Path = p.SOCKET) -> bool:
    """Whether an agent listens on `path` (a socket left by a killed agent refuses connections)."""
    if not path.is_socket():
        return False
    with socket.socket(socket.AF_UNIX) as probe:
        try:
            probe.connect(str(path))
        except ConnectionRefusedError:
            return False
        except PermissionError:
            return True  # it runs; calling it says why it refuses
    return True


def unavailable(path: Path = p.SOCKET) -> str:
    """Why this user cannot reach an agent, or "" when they can: one listens on `path`, or the user is root, for
    whom `connect` starts one in this process (the one the command line provides)."""
    return "" if _runs_one_itself() or agent_running(path) else _no_agent(path)


def _runs_one_itself() -> bool:
    """Whether this process runs an agent when none listens: for root, when its program provides one."""
    return os.geteuid() == 0 and provided()


def _no_agent(path: Path) -> str:
    return (f"no vtopo agent is running at {path}, and only root can work without one: start it with "
            "`sudo vtopo agent --daemon` (or `make run`)")


class Stream(Protocol[T_co]):
    """What the agent tells as it happens (a lab's changes, its links' rates), one item at a time, until `close`
    (from any thread)."""

    def __iter__(self) -> Iterator[T_co]: ...

    def close(self) -> None: ...


class Connection:
    """One request's connection to an agent: the protocol's lines, and the descriptors that go with some of them."""

    def __init__(self, connected: socket.socket) -> None:
        self.socket = connected

    def send(self, data: bytes, fds: Sequence[int] = ()) -> None:
        if fds:
            socket.send_fds(self.socket, [data], list(fds))
        else:
            self.socket.sendall(data)

    def receive(self) -> tuple[bytes, list[int]]:
        """What the agent sent next, and the descriptors with it; b"" once it closed the connection."""
        data, fds, _, _ = socket.recv_fds(self.socket, 1 << 16, 1)
        return data, fds

    def close(self) -> None:
        self.socket.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exception: object) -> None:
        self.close()


class InProcess(Connection):
    """A connection to the agent this process runs for root when no agent listens: the same server code, answering
    this one connection in a thread. When the client is interrupted (Ctrl-C), the deploy it asked for is cancelled
    (it rolls back) and the process waits for the agent to finish, as a deploy in the process itself did."""

    def __init__(self, connected: socket.socket, serving: threading.Thread) -> None:
        super().__init__(connected)
        self.serving = serving

    def __exit__(self, kind: type[BaseException] | None, *exception: object) -> None:
        self.close()
        if kind is not None and issubclass(kind, KeyboardInterrupt):
            local_agent().cancel_deploys()
        self.serving.join()


class OverSsh(Connection):
    """A connection to another site's agent through ssh (vtopo.ssh). Descriptors do not cross it. When the
    site does not answer, what ssh said is the reason given."""

    def __init__(self, site: Site) -> None:
        try:
            ours, self.ssh = start_ssh(site)
        except OSError as error:
            raise AgentUnavailable(f"site {site.name}: cannot run ssh: {error}") from None
        super().__init__(ours)
        self.site = site
        self._said: str | None = None

    def send(self, data: bytes, fds: Sequence[int] = ()) -> None:
        if fds:
            raise AgentUnavailable(f"site {self.site.name}: descriptors cannot be sent to another site's agent")
        try:
            super().send(data)
        except OSError:
            raise self._unanswered() from None

    def receive(self) -> tuple[bytes, list[int]]:
        try:
            data, fds = super().receive()
        except OSError:  # ssh ended while the agent's answer was awaited: reset by ssh's end
            raise self._unanswered() from None
        if not data:
            said = self._ended()
            if self.ssh.returncode == REFUSED_EXIT:  # the site's agent refused the ssh user: it said why
                raise AgentRefused(said.rpartition("\n")[2] or f"its agent refused {self.site.destination}")
            if self.ssh.returncode:  # ssh failed, or the site's `vtopo agent --stdio` could not reach its agent
                raise self._unanswered()
        return data, fds

    def close(self) -> None:
        self._ended()

    def _ended(self) -> str:
        """Close our end, wait for ssh to end (once): what it said."""
        super().close()
        if self._said is None:
            self._said = finish(self.ssh)
        return self._said

    def _unanswered(self) -> AgentUnavailable:
        return AgentUnavailable(f"site {self.site.name} ({self.site.destination}) did not answer: "
                                f"{self._ended() or 'its agent closed the connection'}")


def connect(path: Path | Site = p.SOCKET) -> Connection:
    """The one way a client reaches an agent: the one that listens on `path`, or, for root when none does, one this
    process runs, or another site's through ssh. AgentRefused when the caller may not use it, AgentUnavailable when
    there is none to use."""
    if isinstance(path, Site):
        return OverSsh(path)
    connection = socket.socket(socket.AF_UNIX)
    try:
        connection.connect(str(path))
    except PermissionError:
        connection.close()
        raise AgentRefused(p.refusal(p.user_name(os.getuid()))) from None
    except (FileNotFoundError, ConnectionRefusedError):
        connection.close()
        if not _runs_one_itself():
            raise AgentUnavailable(_no_agent(path)) from None
        ours, theirs = socket.socketpair(socket.AF_UNIX)
        serving = threading.Thread(target=local_agent().answer, args=(theirs,), name="vtopo agent", daemon=True)
        serving.start()
        return InProcess(ours, serving)
    return Connection(connection)


class AgentClient:
    """The agent at `path`, or another site's (`path` a Site)."""

    def __init__(self, path: Path | Site = p.SOCKET) -> None:
        self.path = path

    def connect(self) -> Connection:
        return connect(self.path)

    @property
    def outlives_caller(self) -> bool:
        """Whether what the agent does goes on when this process ends: an agent listens, not one this process runs."""
        return isinstance(self.path, Site) or agent_running(self.path)

    def call(self, request: p.Message, progress: ProgressCallback | None = None, fds: Sequence[int] = (),
             on_descriptor: Callable[[p.Message, int], object] | None = None,
             on_connected: Callable[[Connection], None] | None = None) -> p.Result:
        """Send one request and follow the answer to its Result. Raises AgentRefused when the caller may not use
        the agent; a Result with a non-zero code is returned as it is."""
        with self.connect() as connection:
            connection.send(p.encode(request), fds)
            if on_connected is not None:
                on_connected(connection)
            for message, descriptor in _answers(connection):
                if isinstance(message, p.ProgressEvent) and progress is not None:
                    progress(message)
                elif descriptor is not None:
                    if on_descriptor is None:
                        os.close(descriptor)
                    else:
                        on_descriptor(message, descriptor)
                elif isinstance(message, p.Result):
                    return message
        raise AgentUnavailable("the agent closed the connection without an answer; see its log")

    def ask(self, request: p.Request[A], progress: ProgressCallback | None = None, fds: Sequence[int] = ()) -> A:
        """The request's answer, as its type declares it, or AgentError with the agent's lines."""
        result = self.call(request, progress, fds)
        if result.code != 0:
            raise AgentError(result)
        return p.answer_of(request, result.data)

    # ------------------------------------------------------------ verbs, each its request's answer

    def deploy(self, document: str, consent: Trust, progress: ProgressCallback | None = None, update: bool = False,
               source: str = "", every_step: bool = True) -> DeployReport:
        """`every_step` False: `progress` hears of each stage once (and of what nodes print), not of each operation."""
        request = p.DeployRequest(document, p.Consent(sorted(consent.host_devices), sorted(consent.images),
                                                      sorted(consent.startup_commands), consent.site,
                                                      list(consent.tunnel_vnis)), update, source,
                                  every_step and progress is not None)
        return self.ask(request, progress)

    def destroy(self, lab: str, progress: ProgressCallback | None = None, every_step: bool = True) -> int:
        return self.ask(p.DestroyRequest(lab, every_step and progress is not None), progress).ops

    def status(self, lab: str | None = None) -> list[LabStatus]:
        """Each lab's state (or `lab`'s) as the agent's record has it."""
        return self.ask(p.StatusRequest(lab or "")).labs

    def verify(self, lab: str | None = None) -> tuple[list[LabStatus], list[str]]:
        """Each of the caller's labs (or `lab`) as a probe of the host finds it, and where the agent's record said
        otherwise."""
        verified = self.ask(p.StatusRequest(lab or "", verify=True))
        return verified.labs, verified.differences

    def follow(self, lab: str) -> Stream[p.Message]:
        """The lab's state now and each change to it, as the agent hears of it (see Following)."""
        return Following(self.connect(), lab)

    def labs(self) -> list[LabEntry]:
        """Every deployed lab, whoever owns it, and what the agent is doing to it now."""
        return self.ask(p.LabsRequest()).labs

    def cancel(self, lab: str) -> bool:
        """Cancel the caller's deploy of `lab` (it rolls back); whether one was running."""
        return self.ask(p.CancelRequest(lab)).cancelled

    def deployment(self, lab: str) -> dict[str, Any]:
        """How the caller's lab is deployed, as its record holds it (vtopo.deployed.DeployedLab.of_deployment)."""
        return self.ask(p.RecordRequest(lab))

    def site_of_node(self, lab: str, node: str) -> Site | None:
        """The site a node of the caller's lab runs on, when that is another machine; None for a node here."""
        from vtopo.lab_record import consent_of, topology_of
        from vtopo.model.placement import remote_site

        deployment = self.deployment(lab)
        return remote_site(topology_of(deployment), node, consent_of(deployment).site)

    # vtopo.lab_operations's three functions, done by the agent on a lab of the caller's (with `explain`, only said)

    def operate_node(self, lab: str, node: str, action: p.NodeAction, *, explain: bool = False) -> str:
        return self.ask(p.NodeRequest(lab, node, action, explain)).said

    def set_link_state(self, lab: str, a: str, b: str, up: bool, *, explain: bool = False) -> str:
        action = p.LinkAction.UP if up else p.LinkAction.DOWN
        return self.ask(p.LinkRequest(lab, a, b, action, explain=explain)).said

    def set_link_impairment(self, lab: str, a: str, b: str, change: ImpairmentChange, *, explain: bool = False) -> str:
        return self.ask(p.LinkRequest.setting(lab, a, b, change, explain)).said

    def read_running(self, lab: str) -> RunningState:
        """What the lab's nodes run now (vtopo.saving.read_running), read by the agent on a lab of the caller's."""
        from vtopo.saving import RunningState

        return RunningState.from_json(self.ask(p.SaveRequest(lab)))

    def explain_save(self, lab: str) -> str:
        """The script of what reading the lab's running state runs (vtopo.saving.explain_save), changing nothing."""
        return str(self.ask(p.SaveRequest(lab, explain=True)).get("script", ""))

    def take_checkpoint(self, lab: str, name: str) -> Checkpoint:
        """A checkpoint named `name` of the caller's running lab, as it runs now (vtopo.checkpoints.checkpoint_of)."""
        from vtopo.checkpoints import checkpoint_of

        return checkpoint_of(name, self.read_running(lab))

    def restore(self, lab: str, checkpoint: Checkpoint, explain: bool = False) -> Restored:
        """Put the caller's running lab back as `checkpoint` has it (vtopo.checkpoints.restore), done by the agent."""
        from vtopo.checkpoints import Restored
        from vtopo.model.io import checkpoint_text

        return Restored.from_json(self.ask(p.RestoreRequest(lab, checkpoint_text(checkpoint), explain)))

    def require_owner(self, lab: str, action: str) -> None:
        """AgentRefused unless the caller owns the lab or is root. The agent checks each command it runs; this
        says so before a measurement starts, instead of as a failed command."""
        if os.getuid() == 0:
            return
        owner = next((entry.owner for entry in self.labs() if entry.lab == lab), os.getuid())
        if owner != os.getuid():
            raise AgentRefused(p.not_the_owner(lab, owner, action))

    def load_image(self, path: str, reference: str = "") -> p.ImageEntry:
        """Load the OCI or docker archive at `path` into the caller's own image store (root's: the shared one): this
        process reads its format and the reference it names, and sends it open; the agent opens no path of ours."""
        from vtopo.oci_archives import archive_format

        transport, named = archive_format(path)
        archive = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            return self.ask(p.ImageLoadRequest(transport, named, reference), fds=(archive,))
        finally:
            os.close(archive)

    def images(self) -> list[p.ImageEntry]:
        """The images the caller's labs may run, and whose labs may run each."""
        return self.ask(p.ImagesRequest()).images

    def remove_image(self, reference: str) -> p.ImageEntry:
        return self.ask(p.ImageRemoveRequest(reference))

    def cleanup(self, progress: ProgressCallback | None = None) -> p.CleanupSummary:
        request = p.CleanupRequest()
        result = self.call(request, progress)
        if not result.data:  # refused; a cleanup that failed in part says what it did
            raise AgentError(result)
        return p.answer_of(request, result.data)

    def exec(self, lab: str, node: str, argv: list[str]) -> int:
        """Run `argv` (or the login shell) in a node as the calling user; its exit status. On a terminal the
        command gets a pty of its own, relayed here; otherwise it uses this process's stdin, stdout and stderr.
        In a VM, the command is typed on its serial console (or, with none, the console is attached here)."""
        on_console: list[int] = []

        def take(message: p.Message, descriptor: int) -> None:
            if isinstance(message, p.ConsoleOpened):
                on_console.append(_use_console(descriptor, argv))
            else:
                relay_terminal(descriptor)

        rows, columns = terminal_size()
        if rows:
            request = p.ExecRequest(lab, node, argv, terminal=True, term=os.environ.get("TERM", ""), rows=rows,
                                    columns=columns)
            result = self.call(request, on_descriptor=take)
        else:
            try:
                result = self.call(p.ExecRequest(lab, node, argv), fds=(0, 1, 2), on_descriptor=take,
                                   on_connected=_end_when_unread)
            except AgentUnavailable:
                if _unread(1):
                    return HANGUP_STATUS  # nobody reads it any more: the agent ended it
                raise
        if result.errors:  # the agent's own refusal or failure; a command that fails only has its status
            raise AgentError(result)
        return on_console[0] if on_console else result.code

    def console(self, lab: str, node: str) -> None:
        """Attach this terminal to a VM's serial console, through a socket the agent connected to it."""
        rows, columns = terminal_size()
        result = self.call(p.ConsoleRequest(lab, node, rows, columns),
                           on_descriptor=lambda _, descriptor: _use_console(descriptor, []))
        if result.code != 0:
            raise AgentError(result)

    def link_rates(self, lab: str, every_s: float = 1.0) -> Stream[dict[str, LinkRate]]:
        """The links' rates as they change, from counters the agent reads every `every_s` seconds (see
        LinkRatesFollowed)."""
        return LinkRatesFollowed(self.connect(), p.LinkRatesRequest(lab, every_s))

    def capture(self, lab: str, target: str, bpf: str, count: int) -> int:
        """tcpdump's pcap stream on this process's stdout and its messages on stderr, run by the agent on the
        target of a lab the caller owns; SIGUSR1 asks it for its counters, as it would tcpdump. Its exit status."""
        def ask_for_counters(connection: Connection) -> None:
            line = p.encode(p.CaptureCounters())
            signal.signal(signal.SIGUSR1, lambda _signal, _frame: connection.send(line))

        result = self.call(p.CaptureRequest(lab, target, bpf, count), fds=(1, 2), on_connected=ask_for_counters)
        if result.errors:
            raise AgentError(result)
        return result.code


def _end_when_unread(connection: Connection) -> None:
    """When this process's stdout is a pipe or socket whose reader goes away (ssh's connection to this site ended:
    a measurement's server on another site, cancelled there), close the agent's connection, which ends the command,
    as a terminal's hangup would: a pipe has no hangup signal, and a server that waits prints nothing to fail on."""
    if not stat.S_ISFIFO(mode := os.fstat(1).st_mode) and not stat.S_ISSOCK(mode):
        return

    def watch() -> None:
        poller = select.poll()
        poller.register(1, 0)  # only POLLERR and POLLHUP: the reading end is closed
        poller.poll()
        try:
            connection.socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            return  # the command ended and the connection with it

    threading.Thread(target=watch, name="stdout's reader", daemon=True).start()


def _unread(fd: int) -> bool:
    """Whether nobody reads `fd` any more (a pipe or socket whose other end is closed)."""
    poller = select.poll()
    poller.register(fd, 0)
    return bool(poller.poll(0))


def _use_console(descriptor: int, argv: list[str]) -> int:
    """Type `argv` on a VM's console and return its status, or, with no command, attach this terminal to it."""
    from vtopo import serial_console
    from vtopo.client import console

    with socket.socket(fileno=descriptor) as connected:
        if argv:
            return serial_console.run(connected, argv)
        console.attach(connected)
        return 0


def _answers(connection: Connection) -> Any:
    """(message, descriptor or None) for each line the agent sends, until it closes the connection."""
    buffer = b""
    descriptor: int | None = None
    while True:
        data, fds = connection.receive()
        if not data:
            for fd in fds:
                os.close(fd)
            return
        buffer += data
        descriptor = fds[0] if fds else descriptor
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            message = p.decode(line, p.ANSWERS)
            if isinstance(message, (p.ExecStarted, p.ConsoleOpened)):  # the descriptor came with this line
                yield message, descriptor
                descriptor = None
            else:
                yield message, None


class Subscription:
    """A request the agent answers with a message at each change: `messages()` gives them as the agent sends them,
    until `close` (from any thread) or the agent goes away; AgentError when the agent refuses (the lab is another
    member's)."""

    def __init__(self, connection: Connection, request: p.Message) -> None:
        self._connection = connection
        self._closed = False
        with contextlib.suppress(OSError):  # the agent answered at once (a refusal) or went away: messages() says so
            connection.send(p.encode(request))

    def messages(self) -> Iterator[p.Message]:
        try:
            for message, _ in _answers(self._connection):
                if isinstance(message, p.Result):
                    if message.code != 0:
                        raise AgentError(message)
                    return
                yield message
        except OSError:
            return  # closed here, or reset by an agent that ended
        except AgentUnavailable:
            if not self._closed:  # another site's, whose ssh ended
                raise
        finally:
            self._connection.close()

    def close(self) -> None:
        self._closed = True
        try:
            self._connection.socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            return  # closed already


class Following(Subscription):
    """A lab followed through the agent: a LabsListed and a LabState at once, then each LabsListed, LabState or
    PartsChanged as the agent sends it."""

    def __init__(self, connection: Connection, lab: str) -> None:
        super().__init__(connection, p.FollowRequest(lab))

    def __iter__(self) -> Iterator[p.Message]:
        return self.messages()


class LinkRatesFollowed(Subscription):
    """A lab's link rates as they change: every link's at once, then those that changed (vtopo.reports.RateMeter);
    nothing while no link carries traffic. AgentError when the lab is gone."""

    def __iter__(self) -> Iterator[dict[str, LinkRate]]:
        for message in self.messages():
            if isinstance(message, p.LinkRatesChanged):
                yield message.changes()

