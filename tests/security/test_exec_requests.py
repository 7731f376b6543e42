"""A member's raw exec requests on their own lab's node, with a terminal size no terminal has or a NUL in what the
agent hands the kernel (the command, $TERM): each gets one line naming the field, and leaves the root agent holding
no pseudo-terminal (each one left open counted against the agent's descriptors and the host's ptys, which every
login of the host's needs)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_process import Agent
from security.members import deployed_by, raw, tiny_lab

pytestmark = pytest.mark.privileged

SEND_ONE = """
connection.sendall(sys.argv[2].encode() + b"\\n")
print(connection.recv(65536).decode().strip())
"""


def ptys_held(agent: Agent) -> int:
    """How many pseudo-terminal master ends the agent's process has open."""
    assert agent.process is not None
    fds = Path(f"/proc/{agent.process.pid}/fd")
    return sum(os.readlink(fd) == "/dev/ptmx" for fd in fds.iterdir() if fd.exists())


@pytest.mark.parametrize("bad, says", [
    ({"rows": 70_000, "columns": 80}, "exec.rows is a terminal's size, from 0 to 65535"),
    ({"rows": 24, "columns": -1}, "exec.columns is a terminal's size, from 0 to 65535"),
    ({"term": "xterm\u0000"}, "exec.term may not hold a NUL character"),
    ({"argv": ["sh", "-c", "true\u0000"]}, "exec.argv[2] may not hold a NUL character"),
], ids=["rows-past-65535", "negative-columns", "nul-in-term", "nul-in-argv"])
def test_a_terminal_request_the_kernel_cannot_take_is_one_line_and_leaves_no_pty(agent, users, readable_dir, bad,
                                                                                 says):
    a = users["a"].pw_name
    with deployed_by(agent, a, tiny_lab(readable_dir, "ptys")):
        held = ptys_held(agent)
        request = {"v": 2, "type": "exec", "lab": "ptys", "node": "c1", "argv": ["true"], "terminal": True, **bad}
        answers = [raw(agent, a, SEND_ONE, json.dumps(request)) for _ in range(20)]
        assert ptys_held(agent) == held
    for sent in answers:
        assert sent.returncode == 0, sent.stderr
        answer = json.loads(sent.stdout)
        assert answer["type"] == "result" and answer["errors"] == [f"error: {says}"], answer
