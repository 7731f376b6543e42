"""The agent this process runs for root when none listens: the server's own code, which the client never imports.
The program that puts the two together hands it over (`provide`): the command line, for its commands and the
designer it opens (vtopo.cli.common.run_agent_in_process)."""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import socket


class LocalAgent(Protocol):
    """What the client asks of an agent in its own process (vtopo.server.agent_server.Agent)."""

    def answer(self, connection: socket.socket) -> None:
        """Read one request from `connection`, run it and answer it."""

    def cancel_deploys(self) -> None:
        """Cancel each deploy it runs (they roll back): the client was interrupted."""


_MAKE: list[Callable[[], LocalAgent]] = []  # how to make it, as the program handed it over
_RUNNING: list[LocalAgent] = []  # made when first needed
_STARTING = threading.Lock()


def provide(make: Callable[[], LocalAgent]) -> None:
    """Let root's client run the agent `make` makes when no agent listens."""
    _MAKE[:] = [make]


def provided() -> bool:
    return bool(_MAKE)


def local_agent() -> LocalAgent:
    """The agent this process runs: one, made the first time a connection needs it."""
    with _STARTING:
        if not _RUNNING:
            _RUNNING.append(_MAKE[0]())
        return _RUNNING[0]
