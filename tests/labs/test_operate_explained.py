"""`vtopo node ... --explain` and `vtopo link ... --explain` print what the change runs: the explained script, run by
sh on a freshly deployed lab, leaves the kernel as the change itself leaves the same lab deployed afresh (each
interface's flags and carrier, each qdisc with its options, the state of each process in each namespace), and
explaining changes nothing. tests/test_explain_faithful.py checks the same ops field by field, and
tests/test_explain_mutations.py that it can fail."""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from vtopo.cli.main import main
from vtopo.host.state import StateStore

pytestmark = pytest.mark.privileged

LAB = "bridge-veth"
SETTLE_SECONDS = 5.0


def _json(*argv: str) -> Any:
    return json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout or "[]")


def _process_state(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:  # gone meanwhile
        return "gone"


def kernel_state(prefix: str) -> dict[Any, Any]:
    """What the kernel says of the lab: each of its interfaces' flags (UP, LOWER_UP: its carrier), protodown and MTU,
    each qdisc on them with its options, and the state of each process in each of its namespaces. (An interface's
    operstate is left out: a bridge's follows its ports' in its own time.)"""
    state: dict[Any, Any] = {}
    netns_names = [entry["name"] for entry in _json("ip", "-j", "netns", "list")
                   if entry["name"].startswith(f"{prefix}-")]
    for netns in [None, *netns_names]:
        ip = ["ip", *(["-n", netns] if netns else [])]
        ours = [link for link in _json(*ip, "-d", "-j", "link", "show")
                if netns is not None or link["ifname"].startswith(f"{prefix}-")]
        for link in ours:
            state[netns, link["ifname"]] = (sorted(link["flags"]), link.get("proto_down"), link["mtu"])
        names = {link["ifname"] for link in ours}
        for qdisc in _json("tc", *(["-n", netns] if netns else []), "-j", "qdisc", "show"):
            if qdisc["dev"] in names:
                state[netns, qdisc["dev"], qdisc["handle"]] = (qdisc["kind"], qdisc.get("parent"),
                                                               json.dumps(qdisc.get("options"), sort_keys=True))
        if netns is not None:
            pids = subprocess.run([*ip, "netns", "pids", netns], capture_output=True, text=True).stdout.split()
            state[netns, "processes"] = sorted(_process_state(pid) for pid in pids)
    return state


def settled_state(prefix: str) -> dict[Any, Any]:
    """The lab's kernel state once two readings a little apart agree (the kernel reports carrier changes late)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    state = kernel_state(prefix)
    while time.monotonic() < deadline:
        time.sleep(0.3)
        again = kernel_state(prefix)
        if again == state:
            return state
        state = again
    return state


def vtopo(capsys: Any, *argv: str) -> str:
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


CHANGES = {
    "a link's rate set": ([], ["link", LAB, "c1", "br0", "set", "--rate", "10mbit"]),
    "a rate removed": ([["link", LAB, "c1", "br0", "set", "--rate", "5mbit"]],
                       ["link", LAB, "c1", "br0", "set", "--rate", "0"]),
    "a link taken down": ([], ["link", LAB, "c1", "br0", "down"]),
    "a link brought up": ([["link", LAB, "c1", "br0", "down"]], ["link", LAB, "br0", "c1", "up"]),
    "a node stopped": ([], ["node", LAB, "c1", "stop"]),
    "a node started": ([["node", LAB, "c1", "stop"]], ["node", LAB, "c1", "start"]),
    "a node restarted": ([["node", LAB, "c1", "stop"]], ["node", LAB, "c1", "restart"]),
}


@pytest.mark.parametrize("change", CHANGES, ids=list(CHANGES))
def test_the_explained_script_of_a_change_does_what_the_change_does(change: str, deployed: Any, capsys: Any) -> None:
    before, command = CHANGES[change]
    lab = deployed(LAB)
    record = StateStore().named(LAB)
    assert record is not None

    sleepers: list[subprocess.Popen[bytes]] = []

    def fresh_lab() -> None:
        """The lab deployed afresh, with the changes before this one made, and a process running in c1."""
        lab.deployer.destroy(LAB)
        for sleeper in sleepers:
            sleeper.wait(5)  # it died with its namespace
        lab.deployer.deploy(lab.topology)
        for earlier in before:
            vtopo(capsys, *earlier)
        sleepers.append(subprocess.Popen(lab.lab.command_in("c1", ["sleep", "300"])))

    fresh_lab()
    unchanged, operated = settled_state(record.prefix), record.operated()
    script = vtopo(capsys, *command, "--explain")
    assert script.startswith("#!/bin/sh\n") and f"on lab {LAB!r}" in script.splitlines()[1]
    assert settled_state(record.prefix) == unchanged and record.operated() == operated, "explaining changed nothing"
    subprocess.run(["sh", "-e"], input=script, text=True, check=True, capture_output=True)
    explained = settled_state(record.prefix)
    assert explained != unchanged, "the script did something"

    fresh_lab()
    vtopo(capsys, *command)
    assert settled_state(record.prefix) == explained
    sleepers[-1].kill()
    sleepers[-1].wait()
