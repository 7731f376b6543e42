"""Test users for the agent's tests: a and b in the vtopo group, c outside it, created and removed around a block."""
from __future__ import annotations

import grp
import pwd
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

GROUP = "vtopo"
USERS = {"a": "vtopo-test-a", "b": "vtopo-test-b", "c": "vtopo-test-c"}  # a and b in the group, c outside it


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
