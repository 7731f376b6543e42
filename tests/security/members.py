"""What the adversarial tests share: small labs saved where every test user reads them, deploys (one at a time, or two
at the same moment) and their one-line refusals, a raw client that speaks to the agent as a member would without
vtopo's client, and where a lab's namespace lies."""
from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agent_process import Agent
from members import members
from residue import snapshot
from vtopo.model import io
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

LABS = Path("/var/lib/vtopo/labs")


def tiny_lab(directory: Path, name: str, prefix: str = "", address: str = "10.9.0.1/24", nodes: int = 1) -> Path:
    """A bridge and `nodes` containers, saved readable by every test user; c1 has `address`."""
    topology = Topology(name=name, prefix=prefix)
    topology.add_node(Node(id="br", name="br", kind="bridge", settings={"forward_delay": 0.0}))
    for index in range(1, nodes + 1):
        topology.add_node(Node(id=f"c{index}", name=f"c{index}", kind="container"))
        here = address if index == 1 else f"10.9.1.{index}/24"
        topology.add_link(Link(id=f"l{index}", a=Endpoint(f"c{index}", "eth0", Interface(addresses=[here])),
                               b=Endpoint("br", f"p{index}")))
    return saved(topology, directory)


def saved(topology: Topology, directory: Path) -> Path:
    """`topology` saved in `directory` under its name, readable by every test user."""
    path = directory / f"{topology.name}.vtopo"
    io.save(topology, path)
    path.chmod(0o644)
    return path


def prefix_of(lab: str) -> str:
    """The prefix vtopo chose for the deployed lab `lab`, as root reads it from its record."""
    for record in LABS.glob("*/lab.json"):
        if f'"name": "{lab}"' in record.read_text():
            return record.parent.name
    raise AssertionError(f"no record of lab {lab}")


def namespace_of_exec(agent: Agent, user: str | None, lab: str, node: str) -> str:
    """The network namespace `vtopo exec LAB NODE` runs in, as `user`: "net:[inode]"."""
    shown = agent.vtopo(user, "exec", lab, node, "--", "readlink", "/proc/self/ns/net")
    assert shown.returncode == 0, shown.stderr
    return shown.stdout.strip()


def namespace_file(lab: str, node: str) -> str:
    return f"net:[{os.stat(f'/run/netns/{prefix_of(lab)}-{node}').st_ino}]"


def one_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.returncode != 0 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    return lines[0]


def deploy_both(agent, first: tuple[str, str], second: tuple[str, str]) -> dict[str, object]:
    """Two deploys started at the same moment from two threads: {user: result}."""
    results: dict[str, object] = {}
    start = threading.Barrier(2)

    def deploy(user: str, path: str) -> None:
        start.wait()
        results[user] = agent.vtopo(user, "deploy", path)

    threads = [threading.Thread(target=deploy, args=pair) for pair in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@contextmanager
def deployed_by(agent, user: str, lab: Path) -> Iterator[None]:
    """The lab file `lab` deployed by `user` while the block runs; destroyed after, leaving the host as it was."""
    before = snapshot()
    assert agent.vtopo(user, "deploy", str(lab)).returncode == 0
    try:
        yield
    finally:
        assert agent.vtopo(user, "destroy", lab.stem).returncode == 0
    assert snapshot() - before == {}


@dataclass
class MembersLabs:
    """Members a and b (and outsider c) of `users`, the agent they speak to, and the readable directory of their labs."""

    agent: Agent
    users: dict[str, pwd.struct_passwd]
    directory: Path


@contextmanager
def deployed_by_each(labs: Callable[[Path], list[tuple[str, Path]]]) -> Iterator[MembersLabs]:
    """The test members and a real agent, with each lab file that `labs` writes into a readable directory deployed by
    its member ("a", "b") while the block runs; every one destroyed after, leaving the host as it was."""
    directory = Path(tempfile.mkdtemp(prefix="vtopo-security-labs-"))
    directory.chmod(0o755)
    before = snapshot()
    try:
        with members() as users, Agent.running() as agent:
            deployed = []
            try:
                for user, path in labs(directory):
                    result = agent.vtopo(users[user].pw_name, "deploy", str(path))
                    assert result.returncode == 0, result.stdout + result.stderr
                    deployed.append((user, path.stem))
                yield MembersLabs(agent, users, directory)
            finally:
                for user, name in deployed:
                    agent.vtopo(users[user].pw_name, "destroy", name)
    finally:
        shutil.rmtree(directory)
    assert snapshot() - before == {}


RAW_CLIENT = """
import socket, sys, time
connection = socket.socket(socket.AF_UNIX)
connection.connect(sys.argv[1])
started = time.monotonic()
"""


def raw(agent: Agent, user: str, script: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`script` run by Python as `user`, after RAW_CLIENT connected `connection` to the agent; `args` follow the
    socket's path in sys.argv."""
    return agent.run_as(user, sys.executable, "-c", RAW_CLIENT + script, str(agent.socket), *args, timeout=timeout)
