"""What the adversarial tests share: small labs saved where every test user reads them, a raw client that speaks to
the agent as a member would without vtopo's client, and where a lab's namespace lies."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from agent_process import Agent
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
    path = directory / f"{name}.vtopo"
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
