"""Root measuring a member's lab runs nothing of the member's as root: the programs a measurement runs in a member's
node are whatever the member put there (here a script bound over /usr/bin/ping in the node's own mount namespace),
so root's `vtopo ping` and `vtopo exec` on that lab run them as the lab's owner, through the agent, as the member's own
would."""
from __future__ import annotations

import subprocess

import pytest

from security.members import deployed_by, prefix_of, tiny_lab

pytestmark = pytest.mark.privileged

SET_TRAP = """printf '#!/bin/sh\\necho "$USER $HOME" > /tmp/ran\\nexit 1\\n' > /tmp/ping && chmod 755 /tmp/ping &&
mount --bind /tmp/ping /usr/bin/ping"""


def in_node(lab: str, node: str, *argv: str) -> str:
    """What `argv` prints run by the host's root in the mount namespace of `node` alone: the host's view of its files."""
    return subprocess.run(["nsenter", f"--mount=/run/vtopo/ns/{prefix_of(lab)}/{node}.mnt", *argv],
                          capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.parametrize("command", [["ping", "-c", "1", "traps", "c1", "c2"], ["exec", "traps", "c1", "--", "ping"]],
                         ids=["ping", "exec"])
def test_root_runs_what_a_member_put_in_their_node_as_the_member(agent, users, readable_dir, command):
    a = users["a"]
    with deployed_by(agent, a.pw_name, tiny_lab(readable_dir, "traps", nodes=2)):
        trapped = agent.vtopo(a.pw_name, "exec", "traps", "c1", "--", "sh", "-c", SET_TRAP)
        assert trapped.returncode == 0, trapped.stderr
        agent.vtopo(None, *command)
        assert int(in_node("traps", "c1", "stat", "-c", "%u", "/tmp/ran")) == a.pw_uid
        assert in_node("traps", "c1", "cat", "/tmp/ran") == f"{a.pw_name} {a.pw_dir}"  # nothing of root's environment


def test_root_measures_a_members_lab_through_the_agent(agent, users, readable_dir):
    a = users["a"]
    with deployed_by(agent, a.pw_name, tiny_lab(readable_dir, "measured", address="10.9.1.1/24", nodes=2)):
        pinged = agent.vtopo(None, "ping", "-c", "2", "measured", "c1", "c2")
        assert pinged.returncode == 0, pinged.stderr
        measured = agent.vtopo(None, "iperf", "-t", "1", "--json", "measured", "c1", "c2")
        assert measured.returncode == 0, measured.stderr
        assert '"bits_per_second"' in measured.stdout
