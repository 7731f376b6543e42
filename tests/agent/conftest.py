"""Fixtures for the agent's tests: test users in and out of the vtopo group, and an agent started and stopped by pid
(tests/agent_process.py) on a socket of its own."""
from __future__ import annotations

import pwd
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_process import Agent
from members import members


@pytest.fixture
def users() -> Iterator[dict[str, pwd.struct_passwd]]:
    """Users a and b in the vtopo group, c outside it; removed afterwards."""
    with members() as created:
        yield created


@pytest.fixture
def agent() -> Iterator[Agent]:
    with Agent.running() as running:
        yield running


@pytest.fixture
def readable_dir() -> Iterator[Path]:
    """A directory every test user can read lab files from."""
    directory = Path(tempfile.mkdtemp(prefix="vtopo-agent-labs-"))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)
