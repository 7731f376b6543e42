"""`vtopo exec` on a terminal, as a member through the agent: the command's pty has this terminal's rows and columns
from its first line, and follows each resize."""
from __future__ import annotations

import pytest

from residue import snapshot
from tests.agent.test_agent_verbs import Terminal, saved_copy

pytestmark = pytest.mark.privileged


def test_exec_on_a_terminal_of_40_by_120_has_its_size_and_follows_a_resize(agent, users, readable_dir):
    a = users["a"].pw_name
    before = snapshot()
    lab = saved_copy("bridge-veth", readable_dir, name="size-lab", prefix="vsz")
    assert (deployed := agent.vtopo(a, "deploy", str(lab))).returncode == 0, deployed.stderr
    try:
        once = Terminal(agent, a, "exec", "size-lab", "c1", "--", "stty", "size", rows=40, columns=120)
        assert once.expect(r"\d+ \d+").group(0) == b"40 120"  # rows first; it said "120 40" when swapped
        assert once.close() == 0
        shell = Terminal(agent, a, "exec", "size-lab", "c1", rows=40, columns=120)
        shell.expect(r"# ")  # root of the lab's user namespace
        shell.type("stty size\r")
        shell.expect(r"\r\n40 120\r\n")
        shell.resize(33, 91)
        shell.type("stty size\r")
        shell.expect(r"\b33 91\r\n")  # sh, woken by the resize, may print its prompt first
        shell.type("exit\r")
        assert shell.close() == 0
    finally:
        assert agent.vtopo(a, "destroy", "size-lab").returncode == 0
    assert snapshot() - before == {}
