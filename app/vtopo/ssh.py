"""OpenSSH to another site. It carries the agent's protocol: `ssh SITE vtopo agent --stdio` joins a connection to
the site's agent socket, where the agent knows the caller as the SSH user (SO_PEERCRED), with their groups and limits
there (vtopo.client.agent_client.connect makes a connection of it). It runs what needs a stream of its own there: a shell
or command in a node (`vtopo exec`, with a pty there for a terminal) and a capture (`vtopo capture --pcap`)."""
from __future__ import annotations

import shlex
import socket
import subprocess
from collections.abc import Sequence

from vtopo.model.sites import Site

REMOTE_COMMAND = ("vtopo", "agent", "--stdio")
ALIVE_SECONDS = 5  # ssh asks the site every this many seconds whether it is there, and gives up after three
EXIT_SECONDS = 30  # how long ssh may take to end once its connection is closed
REFUSED_EXIT = 77  # `vtopo agent --stdio` exits with it (so ssh does) when the site's agent refuses the ssh user


def ssh_argv(site: Site, remote: Sequence[str] = REMOTE_COMMAND, terminal: bool = False) -> list[str]:
    """ssh's command line to run `remote` on `site`: batch mode (no password prompt), the site's key and known hosts
    when it names them, the destination after `--`, so that nothing from the lab is read as an option, and each word
    of `remote` quoted for the site's shell, which ssh hands the command to as one line. `terminal`: a pty there
    (the user's shell in a node), else ssh's plain stdin and stdout (measurements, captures, the agent's protocol)."""
    argv = ["ssh", "-tt" if terminal else "-T", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o",
            f"ServerAliveInterval={ALIVE_SECONDS}", "-o", "ServerAliveCountMax=3", "-o", "LogLevel=ERROR",
            "-p", str(site.port)]
    if site.identity:
        argv += ["-i", site.identity, "-o", "IdentitiesOnly=yes"]
    if site.known_hosts:
        argv += ["-o", f"UserKnownHostsFile={site.known_hosts}"]
    return [*argv, "--", site.destination, shlex.join(remote)]


def start_ssh(site: Site) -> tuple[socket.socket, subprocess.Popen[bytes]]:
    """Our end of a socket whose other end is ssh's stdin and stdout, and the ssh process. OSError if ssh won't run."""
    ours, theirs = socket.socketpair()
    with theirs:
        try:
            return ours, subprocess.Popen(ssh_argv(site), stdin=theirs.fileno(), stdout=theirs.fileno(),
                                          stderr=subprocess.PIPE)
        except OSError:
            ours.close()
            raise


def finish(ssh: subprocess.Popen[bytes]) -> str:
    """Wait for ssh to end; what it said on stderr."""
    _, said = ssh.communicate(timeout=EXIT_SECONDS)
    return said.decode(errors="replace").strip()
