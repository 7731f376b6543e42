"""What a member's node prints for `vtopo save` is parsed by no process of root's: a fake `ip`, put before the real one
on the PATH of a's container by a startup command of theirs, prints JSON nested 200,000 deep, or addresses shaped to
be something else, to the commands that read the node's state. The reader runs as a, with no group, no capability and
no_new_privs (seen in /proc while it runs); the first printout is refused in one line naming the node and the second
in one line naming the field, the agent answers on, the lab's record keeps what it had, and once the fake steps aside
`vtopo save` keeps the address a typed in their node, in their lab's file."""
from __future__ import annotations

import base64
import json
import pwd
import sys
import threading
from pathlib import Path

import pytest

from members import owned_by
from security.members import one_line, prefix_of, saved
from vtopo.model import io
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

pytestmark = pytest.mark.privileged

LAB = "shown"
FAKE_IP = r"""#!/bin/sh
case "$*" in *address*)
  case "$(cat /run/fake-ip/mode)" in
    deep) exec python3 -c 'import sys; sys.stdout.write("[" * 200000 + "]" * 200000)' ;;
    shaped) echo '[{"ifname": "eth0", "addr_info": [{"local": "10.9.0.1/24 dev lo", "prefixlen": 24, "scope": "global"}]}]'
            exit 0 ;;
  esac ;;
esac
exec /usr/sbin/ip "$@"
"""
# in a's own node: a tmpfs over /usr/local/sbin, which comes before /usr/sbin on the agent's PATH, holding the fake
INSTALL = ["mkdir -p /run/fake-ip", "echo real > /run/fake-ip/mode", "mount -t tmpfs fake /usr/local/sbin",
           f"echo {base64.b64encode(FAKE_IP.encode()).decode()} | base64 -d > /usr/local/sbin/ip",
           "chmod 755 /usr/local/sbin/ip"]


def container_lab(directory: Path) -> Path:
    topology = Topology(name=LAB)
    topology.add_node(Node(id="br", name="br", kind="bridge", settings={"forward_delay": 0.0}))
    topology.add_node(Node(id="c1", name="c1", kind="container", startup_commands=INSTALL))
    topology.add_link(Link(id="l1", a=Endpoint("c1", "eth0", Interface(addresses=["10.9.0.1/24"])),
                           b=Endpoint("br", "p1")))
    return saved(topology, directory)


class ReaderWatch:
    """The identity of each process reading a node's state, from /proc, while a save runs: the interpreter running
    vtopo.saved_states, once setpriv, prlimit and env (root's until they exec it) have handed over."""

    def __init__(self) -> None:
        self.seen: dict[int, dict[str, str]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch)

    def __enter__(self) -> ReaderWatch:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()

    def _watch(self) -> None:
        while not self.stop.is_set():
            for entry in Path("/proc").iterdir():
                if entry.name.isdigit() and int(entry.name) not in self.seen:
                    try:
                        argv = (entry / "cmdline").read_bytes().split(b"\0")
                        if argv[0] == sys.executable.encode() and b"vtopo.saved_states" in argv:
                            status = (entry / "status").read_text()
                            self.seen[int(entry.name)] = {name: value.strip() for name, _, value in
                                                          (line.partition(":") for line in status.splitlines())}
                    except OSError:
                        continue


def assert_unprivileged(watch: ReaderWatch, account: pwd.struct_passwd) -> None:
    """Every reader `watch` saw ran as `account` and its login group alone, with no capability and no_new_privs."""
    assert watch.seen, "no reader of the nodes' state was seen"
    for status in watch.seen.values():
        assert status["Uid"].split() == [str(account.pw_uid)] * 4, status["Uid"]
        assert status["Gid"].split() == [str(account.pw_gid)] * 4, status["Gid"]
        assert status["Groups"] == "" and status["NoNewPrivs"] == "1"
        assert int(status["CapEff"], 16) == int(status["CapPrm"], 16) == int(status["CapBnd"], 16) == 0


def recorded_topology(lab: str) -> dict[str, object]:
    record = Path(f"/var/lib/vtopo/labs/{prefix_of(lab)}/lab.json")
    return json.loads(record.read_text())["topology"]


def test_what_a_members_node_prints_for_save_is_read_as_them_and_checked(agent, users, readable_dir):
    a = users["a"]
    lab = owned_by(container_lab(readable_dir), a)
    deployed = agent.vtopo(a.pw_name, "deploy", "--allow-commands", "c1", str(lab))
    assert deployed.returncode == 0, deployed.stderr
    try:
        def mode(word: str) -> None:
            said = agent.vtopo(a.pw_name, "exec", LAB, "c1", "--", "sh", "-c", f"echo {word} > /run/fake-ip/mode")
            assert said.returncode == 0, said.stderr

        before = recorded_topology(LAB)
        mode("deep")
        with ReaderWatch() as watch:
            deep = agent.vtopo(a.pw_name, "save", LAB)
        assert "could not read the state of c1" in one_line(deep) and "RecursionError" in deep.stderr, deep.stderr
        assert_unprivileged(watch, a)

        mode("shaped")
        shaped = agent.vtopo(a.pw_name, "save", LAB)
        assert "c1" in one_line(shaped) and "10.9.0.1/24 dev lo/24" in shaped.stderr, shaped.stderr
        assert recorded_topology(LAB) == before
        assert agent.vtopo(a.pw_name, "status").returncode == 0

        mode("real")
        typed = agent.vtopo(a.pw_name, "exec", LAB, "c1", "--", "ip", "address", "add", "10.9.0.5/24", "dev", "eth0")
        assert typed.returncode == 0, typed.stderr
        kept = agent.vtopo(a.pw_name, "save", LAB)
        assert kept.returncode == 0, kept.stderr
        [link] = io.load(lab).links.values()
        assert link.a.interface.addresses == ["10.9.0.1/24", "10.9.0.5/24"]
    finally:
        assert agent.vtopo(a.pw_name, "destroy", LAB).returncode == 0


def test_roots_own_lab_is_read_as_nobody(agent, readable_dir):
    """Root's labs live in a user namespace too (vtopo-lab is root there), and a lab file root deploys may come from
    anyone: what its nodes print is read as nobody."""
    topology = io.load(container_lab(readable_dir))
    topology.node_named("c1").startup_commands = []
    lab = saved(topology, readable_dir)
    deployed = agent.vtopo(None, "deploy", str(lab))
    assert deployed.returncode == 0, deployed.stderr
    try:
        with ReaderWatch() as watch:
            kept = agent.vtopo(None, "save", LAB, "-o", str(readable_dir / "kept.vtopo"))
        assert kept.returncode == 0, kept.stderr
        assert_unprivileged(watch, pwd.getpwnam("nobody"))
    finally:
        assert agent.vtopo(None, "destroy", LAB).returncode == 0
