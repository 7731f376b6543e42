"""Talking to the agent: what the CLI and the designer use instead of the executor when an agent runs."""
from __future__ import annotations

import os
import socket
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vtopo.agent import protocol as p
from vtopo.agent.terminal import relay_terminal
from vtopo.kinds.environment import Trust
from vtopo.model import io
from vtopo.model.topology import Topology
from vtopo.reports import DeployReport, ProgressCallback

class AgentUnavailable(Exception):
    """No agent listens on the socket."""


class AgentRefused(Exception):
    """The caller may not do this (not in the group, or not the lab's owner); the message is the line to print."""


class AgentError(Exception):
    """A request that failed; `result` holds the lines the agent sent (what the CLI prints in-process)."""

    def __init__(self, result: p.Result) -> None:
        super().__init__("\n".join(line.removeprefix("error: ") for line in result.errors) or "the agent failed")
        self.result = result
        self.details = result.details


def exec_argv(lab: str, node: str, argv: list[str]) -> list[str]:
    """The argv that runs `argv` in a node through the agent (`vtopo exec`), as the calling user: how a client's
    measurements run their commands."""
    return [sys.executable, "-m", "vtopo", "exec", lab, node, "--", *argv]


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


class AgentClient:
    def __init__(self, path: Path = p.SOCKET) -> None:
        self.path = path

    def connect(self) -> socket.socket:
        connection = socket.socket(socket.AF_UNIX)
        try:
            connection.connect(str(self.path))
        except PermissionError:
            connection.close()
            raise AgentRefused(p.refusal(p.user_name(os.getuid()))) from None
        except (FileNotFoundError, ConnectionRefusedError) as error:
            connection.close()
            raise AgentUnavailable(f"no vtopo agent is running at {self.path} ({error.strerror}); start it with "
                                   "`sudo vtopo agent --daemon`, or `make run`") from None
        return connection

    def call(self, request: p.Message, progress: ProgressCallback | None = None, fds: Sequence[int] = (),
             on_descriptor: Callable[[int], None] | None = None) -> p.Result:
        """Send one request and follow the answer to its Result. Raises AgentRefused when the caller may not use
        the agent; a Result with a non-zero code is returned as it is."""
        with self.connect() as connection:
            line = p.encode(request)
            if fds:
                socket.send_fds(connection, [line], list(fds))
            else:
                connection.sendall(line)
            for message, descriptor in _answers(connection):
                if isinstance(message, p.ProgressEvent) and progress is not None:
                    progress(message)
                elif isinstance(message, p.ExecStarted) and descriptor is not None and on_descriptor is not None:
                    on_descriptor(descriptor)
                elif isinstance(message, p.Result):
                    return message
        raise AgentUnavailable("the agent closed the connection without an answer; see its log")

    def checked(self, request: p.Message, progress: ProgressCallback | None = None) -> dict[str, Any]:
        """The result's data, or AgentError with the agent's lines."""
        result = self.call(request, progress)
        if result.code != 0:
            raise AgentError(result)
        return result.data

    # ------------------------------------------------------------ verbs

    def deploy(self, document: str, consent: Trust, progress: ProgressCallback | None = None, update: bool = False,
               source: str = "") -> DeployReport:
        request = p.DeployRequest(document, p.Consent(sorted(consent.host_devices), sorted(consent.images),
                                                      sorted(consent.startup_commands)), update, source)
        report: DeployReport = p.read_as(DeployReport, self.checked(request, progress))
        return report

    def destroy(self, lab: str, progress: ProgressCallback | None = None) -> int:
        return int(self.checked(p.DestroyRequest(lab), progress)["ops"])

    def status(self, lab: str | None = None) -> list[p.LabSummary]:
        return [p.read_as(p.LabSummary, raw) for raw in self.checked(p.StatusRequest(lab or ""))["labs"]]

    def require_owner(self, lab: str, action: str) -> None:
        """AgentRefused unless the caller owns the lab or is root. The agent checks each command it runs; this
        says so before a measurement starts, instead of as a failed command."""
        owner = next((summary.owner for summary in self.status(lab)), os.getuid())
        if os.getuid() not in (0, owner):
            raise AgentRefused(p.not_the_owner(lab, owner, action))

    def cleanup(self, progress: ProgressCallback | None = None) -> p.CleanupSummary:
        result = self.call(p.CleanupRequest(), progress)
        if not result.data:  # refused
            raise AgentError(result)
        summary: p.CleanupSummary = p.read_as(p.CleanupSummary, result.data)
        return summary

    def exec(self, lab: str, node: str, argv: list[str]) -> int:
        """Run `argv` (or the login shell) in a node as the calling user; its exit status. On a terminal the
        command gets a pty of its own, relayed here; otherwise it uses this process's stdin, stdout and stderr."""
        if os.isatty(0):
            rows, columns = os.get_terminal_size(0)
            request = p.ExecRequest(lab, node, argv, terminal=True, term=os.environ.get("TERM", ""), rows=rows,
                                    columns=columns)
            result = self.call(request, on_descriptor=relay_terminal)
        else:
            result = self.call(p.ExecRequest(lab, node, argv), fds=(0, 1, 2))
        if result.errors:  # the agent's own refusal or failure; a command that fails only has its status
            raise AgentError(result)
        return result.code


def _answers(connection: socket.socket) -> Any:
    """(message, descriptor or None) for each line the agent sends, until it closes the connection."""
    buffer = b""
    descriptor: int | None = None
    while True:
        data, fds, _, _ = socket.recv_fds(connection, 1 << 16, 1)
        if not data:
            for fd in fds:
                os.close(fd)
            return
        buffer += data
        descriptor = fds[0] if fds else descriptor
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            message = p.decode(line, p.ANSWERS)
            if isinstance(message, p.ExecStarted):  # the descriptor came with this line, perhaps after others
                yield message, descriptor
                descriptor = None
            else:
                yield message, None


class AgentDeployer:
    """The designer's Deployer (gui.host_api.Deployer) when the agent does the host work."""

    def __init__(self, client: AgentClient | None = None) -> None:
        self.client = client or AgentClient()

    def update(self, topology: Topology, progress: ProgressCallback, consent: Trust = Trust()) -> DeployReport:
        return self.client.deploy(io.dumps(topology), consent, progress, update=True)

    def destroy(self, lab: str, progress: ProgressCallback) -> int:
        return self.client.destroy(lab, progress)

    def status(self, lab: str | None = None) -> list[p.LabSummary]:
        return self.client.status(lab)
