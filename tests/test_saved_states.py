"""vtopo.saved_states, the reader of what a running lab's nodes printed for `vtopo save`: each kind reads its node's
state from it; a printout its kind cannot read (JSON nested past any parser's depth, no JSON at all) ends the reader
with one answer naming the node, never a traceback; and root reads what it says as it reads a lab file's checkpoint,
so that what is no lab's to hold (a control character in an address) is refused there.
tests/security/test_saved_state.py runs it through the agent, as the member whose node printed it."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from vtopo import saved_states
from vtopo.host.state import StateStore
from vtopo.lab_operations import OperateError
from vtopo.lab_record import consent_to_json
from vtopo.lab_terms import HostFacts, Trust
from vtopo.model import io
from vtopo.model.problems import LabError
from vtopo.model.topology import Node, Topology
from vtopo.saving import read_states
from wiring import wire

RUNNING_CONFIG = "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4\nhostname r1\n" \
                 "ip route 10.99.0.0/24 Null0\n!\nend\n"
ADDRESSES = [{"ifname": "eth0", "addr_info": [{"local": "10.1.0.11", "prefixlen": 24, "scope": "global"}]}]


def given(addresses: str = json.dumps(ADDRESSES)) -> dict[str, Any]:
    """What root hands the reader for a deployed h1 - r1: the lab's record, and what each command printed."""
    topology = Topology(name="shown", prefix="vshw")
    topology.add_node(Node(id="r1", name="r1", kind="router", settings={"config": "hostname r1\n"}))
    topology.add_node(Node(id="h1", name="h1", kind="container", settings={"default_route": "10.1.0.1"}))
    wire(topology, ("h1:eth0", "r1:eth0", "10.1.0.10/24", "10.1.0.1/24"))
    record = {"name": "shown", "prefix": "vshw", "topology": io.to_document(topology),
              "facts": dataclasses.asdict(HostFacts()), "consent": consent_to_json(Trust())}
    return {"record": record, "media": {}, "stopped": [],
            "shown": [["r1", "vtysh -c 'show running-config'", RUNNING_CONFIG],
                      ["h1", "ip -j address show", addresses],
                      ["h1", "ip -j -4 route show", json.dumps([{"dst": "default", "gateway": "10.1.0.1"}])],
                      ["h1", "ip -j -6 route show", "[]"]]}


def read(asked: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vtopo.saved_states"], input=json.dumps(asked), capture_output=True,
                          text=True, timeout=60, check=False)


def test_each_kind_reads_its_nodes_state_and_root_reads_it_as_a_checkpoint() -> None:
    done = read(given())
    assert done.returncode == 0, done.stderr
    checkpoint = io.read_checkpoint(done.stdout)
    assert checkpoint.nodes["h1"].addresses == {"eth0": ["10.1.0.11/24"]}
    assert checkpoint.nodes["h1"].settings["default_route"] == "10.1.0.1"
    assert "ip route 10.99.0.0/24 Null0" in checkpoint.nodes["r1"].settings["config"]


@pytest.mark.parametrize("printed, why", [
    ("[" * 200_000 + "]" * 200_000, "RecursionError"),
    ("not json", "JSONDecodeError"),
    (json.dumps([{"ifname": "eth0", "addr_info": [{"local": "10.1.0.11"}]}] * 3 + [7]), "AttributeError"),
])
def test_a_printout_its_kind_cannot_read_is_one_answer_naming_the_node(printed: str, why: str) -> None:
    done = read(given(printed))
    assert done.returncode == saved_states.UNREADABLE and done.stderr == "", done.stderr
    said = json.loads(done.stdout)
    assert said["node"] == "h1" and said["why"].startswith(why) and len(said["why"]) <= saved_states.WHY_CHARACTERS


def test_what_a_node_shaped_is_refused_where_root_reads_it_naming_the_field() -> None:
    """An address with an escape sequence in it is the member's to print: the reader passes it on, and root's
    checkpoint reader refuses it naming the field."""
    shaped = [{"ifname": "eth0", "addr_info": [{"local": "10.1.0.11\x1b[2J", "prefixlen": 24, "scope": "global"}]}]
    done = read(given(json.dumps(shaped)))
    assert done.returncode == 0, done.stderr
    with pytest.raises(LabError) as refused:
        io.read_checkpoint(done.stdout)
    assert "h1.addresses.eth0[0]" in str(refused.value.problems[0]), refused.value.problems


@pytest.mark.privileged
def test_root_runs_the_reader_as_nobody_for_its_own_lab_and_says_when_the_state_is_too_large(tmp_path: Path) -> None:
    """Root's own lab (its record's owner is uid 0) is read as nobody, through the same path as a member's; a router
    configuration printed larger than a lab file may be is one line, not a reader killed at its output's limit."""
    asked = given()
    record = StateStore(tmp_path).create("vshw", asked["record"])
    shown = {(node, command): printed for node, command, printed in asked["shown"]}
    states = read_states(record, [], shown, {"r1", "h1"})
    assert states["h1"].addresses == {"eth0": ["10.1.0.11/24"]}
    shown[("r1", "vtysh -c 'show running-config'")] = RUNNING_CONFIG + "!\n" * (3 << 20)
    with pytest.raises(OperateError, match="it is more than the 4 MiB a lab file may hold"):
        read_states(record, [], shown, {"r1", "h1"})
