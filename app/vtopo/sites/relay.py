"""`vtopo agent --stdio`: one connection to this host's agent, on stdin and stdout (what `ssh SITE` runs). The agent
sees the caller who runs it (the SSH user) as it sees any client of its socket."""
from __future__ import annotations

import os
import socket
import sys
import threading
from pathlib import Path

from vtopo.client.agent_client import AgentRefused, AgentUnavailable, Connection, connect
from vtopo.ssh import REFUSED_EXIT

CHUNK = 1 << 16


def relay_stdio(path: Path) -> int:
    try:
        connection = connect(path)
    except AgentRefused as error:  # the caller's client says it, for the site
        print(error, file=sys.stderr)
        return REFUSED_EXIT
    except AgentUnavailable as error:
        print(f"vtopo agent --stdio: {error}", file=sys.stderr)
        return 1
    with connection:
        threading.Thread(target=_requests, args=(connection,), daemon=True).start()
        while True:
            data, fds = connection.receive()
            for fd in fds:  # a descriptor does not cross ssh: the caller on the other site gets none
                os.close(fd)
            if not data:
                break
            _write_all(1, data)
    return 0


def _requests(connection: Connection) -> None:
    """stdin to the agent, until stdin ends; then the agent hears that the client is done sending."""
    try:
        while data := os.read(0, CHUNK):
            connection.send(data)
        connection.socket.shutdown(socket.SHUT_WR)
    except OSError:
        return


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
