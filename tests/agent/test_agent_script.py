"""scripts/agent.sh, which setup runs on machines without systemd: it starts `vtopo agent --daemon` once, with a pid
file, and leaves an agent that already listens alone; and the test suite itself is never served by such an agent."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from waiting import wait_for
from vtopo import protocol
from vtopo.client.agent_client import agent_running

ROOT = Path(__file__).resolve().parents[2]


def test_the_suite_looks_for_the_agent_on_a_socket_of_its_own():
    assert protocol.SOCKET != Path("/run/vtopo/agent.sock") and not agent_running(protocol.SOCKET)


@pytest.mark.privileged
def test_setup_starts_the_agent_once_and_leaves_it_running():
    directory = Path(tempfile.mkdtemp(prefix="vtopo-agent-script-", dir="/run"))
    socket, pid_file = directory / "agent.sock", directory / "agent.pid"
    env = {**os.environ, "VTOPO_AGENT_SOCKET": str(socket), "VTOPO_VENV": sys.prefix}

    def agent_sh() -> str:
        run = subprocess.run(["bash", str(ROOT / "scripts" / "agent.sh")], env=env, capture_output=True, text=True,
                             timeout=60, stdin=subprocess.DEVNULL)
        assert run.returncode == 0, run.stderr
        return run.stdout.strip()

    pid = 0
    try:
        started = agent_sh()
        pid = int(pid_file.read_text())
        assert started.startswith(f"agent: started, pid {pid}, listening on {socket}") and agent_running(socket)
        assert agent_sh() == f"agent: already listening on {socket} (pid {pid})"
        assert int(pid_file.read_text()) == pid
        os.kill(pid, signal.SIGTERM)
        assert wait_for(lambda: not Path(f"/proc/{pid}").exists(), 10)
        pid = 0
        assert not socket.exists() and not pid_file.exists()  # a stopped agent leaves neither behind
    finally:
        if pid:
            os.kill(pid, signal.SIGTERM)
        shutil.rmtree(directory, ignore_errors=True)
