"""OpenSSH carries the agent's protocol to a site: `ssh SITE vtopo agent --stdio` joins the connection to the site's
agent socket, where the agent knows the caller as the SSH user (SO_PEERCRED), with their groups and limits there."""
from __future__ import annotations

import socket
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from vtopo.agent import protocol as p
from vtopo.agent.client import AgentClient, AgentUnavailable
from vtopo.model.sites import Site
from vtopo.reports import ProgressCallback

REMOTE_COMMAND = ("vtopo", "agent", "--stdio")
ALIVE_SECONDS = 5  # ssh asks the site every this many seconds whether it is there, and gives up after three


def ssh_argv(site: Site) -> list[str]:
    """ssh's command line for `site`: batch mode (no password prompt), the site's key and known hosts when it names
    them, and the destination after `--`, so that nothing from the lab is read as an option."""
    argv = ["ssh", "-T", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o",
            f"ServerAliveInterval={ALIVE_SECONDS}", "-o", "ServerAliveCountMax=3", "-p", str(site.port)]
    if site.identity:
        argv += ["-i", site.identity, "-o", "IdentitiesOnly=yes"]
    if site.known_hosts:
        argv += ["-o", f"UserKnownHostsFile={site.known_hosts}"]
    return [*argv, "--", site.destination, *REMOTE_COMMAND]


class SiteClient(AgentClient):
    """The agent of another site, through ssh: one ssh process per connection, as one socket connection locally."""

    def __init__(self, site: Site) -> None:
        super().__init__(Path(f"/{site.destination}"))
        self.site = site
        self._ssh: list[subprocess.Popen[bytes]] = []

    def connect(self) -> socket.socket:
        ours, theirs = socket.socketpair()
        with theirs:
            try:
                self._ssh.append(subprocess.Popen(ssh_argv(self.site), stdin=theirs.fileno(), stdout=theirs.fileno(),
                                                  stderr=subprocess.PIPE))
            except OSError as error:
                ours.close()
                raise AgentUnavailable(f"site {self.site.name}: cannot run ssh: {error}") from None
        return ours

    def call(self, request: p.Message, progress: ProgressCallback | None = None, fds: Sequence[int] = (),
             on_descriptor: Callable[[p.Message, int], object] | None = None,
             on_connected: Callable[[socket.socket], None] | None = None) -> p.Result:
        """AgentClient.call; when the site does not answer, what ssh said."""
        try:
            return super().call(request, progress, fds, on_descriptor, on_connected)
        except AgentUnavailable:
            said = self._finish()
            raise AgentUnavailable(f"site {self.site.name} ({self.site.destination}) did not answer: "
                                   f"{said or 'its agent closed the connection'}") from None
        finally:
            self._finish()

    def _finish(self) -> str:
        """Wait for the ssh processes of closed connections; what the last one said on stderr."""
        said = ""
        while self._ssh:
            process = self._ssh.pop()
            _, error = process.communicate(timeout=30)
            said = error.decode(errors="replace").strip() or said
        return said
