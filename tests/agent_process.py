"""`vtopo agent` in a subprocess for tests and benchmarks, started and stopped by its pid.

It listens on a socket of its own in a fresh directory under /run (VTOPO_AGENT_SOCKET), so that an agent the machine
runs is left alone.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from vtopo.client.agent_client import agent_running


@dataclass
class Agent:
    """`vtopo agent` in a subprocess, on its own socket."""

    directory: Path
    config: str = ""  # the text of its agent.toml; "" for none (the defaults)
    process: subprocess.Popen[bytes] | None = None
    env: dict[str, str] = field(default_factory=dict)

    @property
    def socket(self) -> Path:
        return self.directory / "agent.sock"

    @property
    def config_file(self) -> Path:
        return self.directory / "agent.toml"

    def start(self) -> None:
        self.env = {**os.environ, "VTOPO_AGENT_SOCKET": str(self.socket)}
        if self.config:
            self.config_file.write_text(self.config)
        self.process = subprocess.Popen([sys.executable, "-m", "vtopo", "agent", "--config", str(self.config_file)],
                                        env=self.env, stdout=subprocess.DEVNULL)
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
        return self.run_as(user, sys.executable, "-m", "vtopo", *args, timeout=timeout)

    def run_as(self, user: str | None, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        runner = ["runuser", "-u", user, "--"] if user else []
        return subprocess.run([*runner, *argv], env=self.env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, cwd="/")

    def spawn(self, user: str | None, *args: str) -> subprocess.Popen[str]:
        runner = ["runuser", "-u", user, "--"] if user else []
        return subprocess.Popen([*runner, sys.executable, "-m", "vtopo", *args], env=self.env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, cwd="/")

    @classmethod
    @contextmanager
    def running(cls, config: str = "") -> Iterator[Agent]:
        """An agent on a socket of its own; `config` is its agent.toml (the defaults without one)."""
        directory = Path(tempfile.mkdtemp(prefix="vtopo-agent-test-", dir="/run"))
        directory.chmod(0o755)
        agent = cls(directory, config)
        agent.start()
        try:
            yield agent
        finally:
            if agent.process is not None:
                agent.kill(signal.SIGTERM)
            shutil.rmtree(directory, ignore_errors=True)
