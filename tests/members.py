"""Fixtures for the tests that go through the agent (tests/agent, tests/security): test users in and out of the vtopo
group, and an agent started and stopped by pid (tests/agent_process.py) on a socket of its own. Each package's
conftest.py imports them; `members()` makes the users for a whole module or a benchmark."""
from __future__ import annotations

import grp
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agent_process import Agent

GROUP = "vtopo"
USERS = {"a": "vtopo-test-a", "b": "vtopo-test-b", "c": "vtopo-test-c"}  # a and b in the group, c outside


@contextmanager
def members() -> Iterator[dict[str, pwd.struct_passwd]]:
    """Users a and b in the vtopo group, c outside it; removed afterwards."""
    try:
        grp.getgrnam(GROUP)
    except KeyError:
        pytest.skip(f"no group {GROUP}: scripts/setup.sh creates it")
    for name in USERS.values():
        subprocess.run(["userdel", name], capture_output=True)  # left by an interrupted run
    try:
        for key, name in USERS.items():
            groups = ["-G", GROUP] if key in "ab" else []
            subprocess.run(["useradd", "--no-create-home", "--no-user-group", "--shell", "/bin/sh", *groups, name],
                           check=True, capture_output=True)
        yield {key: pwd.getpwnam(name) for key, name in USERS.items()}
    finally:
        for name in USERS.values():
            subprocess.run(["userdel", name], capture_output=True)


@pytest.fixture
def users() -> Iterator[dict[str, pwd.struct_passwd]]:
    with members() as created:
        yield created


@pytest.fixture
def agent() -> Iterator[Agent]:
    with Agent.running() as running:
        yield running


def owned_by(path: Path, user: pwd.struct_passwd) -> Path:
    """A lab file of `user`'s own, which `vtopo save` rewrites: in a directory `save` may write the new file into."""
    path.chmod(0o644)
    os.chown(path, user.pw_uid, user.pw_gid)
    path.parent.chmod(0o777)
    return path


@pytest.fixture
def readable_dir() -> Iterator[Path]:
    """A directory every test user can read lab files from."""
    directory = Path(tempfile.mkdtemp(prefix="vtopo-agent-labs-"))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)
