"""vtopo.client.agent_client's subscriptions when the agent has already answered or gone before the request is sent."""
from __future__ import annotations

import socket

import pytest

from vtopo import protocol as p
from vtopo.client.agent_client import AgentError, Connection, Following


def test_following_an_agent_that_has_gone_ends_at_once_without_an_error() -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX)
    theirs.close()
    assert not list(Following(Connection(ours), "lab"))


def test_a_refusal_sent_before_the_request_was_read_is_raised() -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX)
    theirs.sendall(p.encode(p.Result(code=1, errors=["not yours"])))
    theirs.close()
    with pytest.raises(AgentError):
        list(Following(Connection(ours), "lab"))
