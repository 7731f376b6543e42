"""Fixtures for the agent's tests: test users in and out of the vtopo group, and an agent started and stopped by pid.

The agent listens on a socket of its own in a fresh directory (VTOPO_AGENT_SOCKET), so that an agent the machine
runs is left alone.
"""
from __future__ import annotations

import grp
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from vtopo.agent.client import agent_running

GROUP = "vtopo"
USERS = {"a": "vtopo-test-a", "b": "vtopo-test-b", "c": "vtopo-test-c"}  # a and b in the group, c outside


@dataclass
class Agent:
    """`vtopo agent` in a subprocess, on its own socket."""

    directory: Path
    process: subprocess.Popen[bytes] | None = None
    env: dict[str, str] = field(default_factory=dict)

    @property
    def socket(self) -> Path:
        return self.directory / "agent.sock"

    def start(self) -> None:
        self.env = {**os.environ, "VTOPO_AGENT_SOCKET": str(self.socket)}
        self.process = subprocess.Popen([sys.executable, "-m", "vtopo", "agent"], env=self.env,
                                        stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while not agent_running(self.socket):
            assert self.process.poll() is None, "the agent exited at start"
            assert time.monotonic() < deadline, "the agent did not listen within 30 s"
            time.sleep(0.05)

    def kill(self, sig: signal.Signals = signal.SIGKILL) -> None:
        assert self.process is not None
        os.kill(self.process.pid, sig)
        self.process.wait(timeout=30)
        self.process = None

    def vtopo(self, user: str | None, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """`vtopo ARGS` as `user` (None: root), talking to this agent."""
        runner = ["runuser", "-u", user, "--"] if user else []
        return subprocess.run([*runner, sys.executable, "-m", "vtopo", *args], env=self.env, capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL, cwd="/")

    def spawn(self, user: str | None, *args: str) -> subprocess.Popen[str]:
        runner = ["runuser", "-u", user, "--"] if user else []
        return subprocess.Popen([*runner, sys.executable, "-m", "vtopo", *args], env=self.env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd="/")


@pytest.fixture
def users() -> Iterator[dict[str, pwd.struct_passwd]]:
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
def agent() -> Iterator[Agent]:
    directory = Path(tempfile.mkdtemp(prefix="vtopo-agent-test-", dir="/run"))
    directory.chmod(0o755)
    running = Agent(directory)
    running.start()
    try:
        yield running
    finally:
        if running.process is not None:
            running.kill(signal.SIGTERM)
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def readable_dir() -> Iterator[Path]:
    """A directory every test user can read lab files from."""
    directory = Path(tempfile.mkdtemp(prefix="vtopo-agent-labs-"))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)
