"""Attacks 1 (the agent's side) and 11: what a member's lab file and consent may ask for. Startup commands on a node
without a namespace would run as root on the host: a member's --allow-commands on one is refused in one line. A
number of 5,000 digits inside a string is one problem with its JSON path, through the agent as on the command line."""
from __future__ import annotations

import json

import pytest

from residue import snapshot
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged


def test_a_members_startup_commands_on_a_host_node_are_refused_saying_only_root_may(agent, users, readable_dir,
                                                                                    tmp_path):
    witness = tmp_path / "ran-as"
    lab = readable_dir / "host-commands.vtopo"
    lab.write_text(json.dumps({"format": "vtopo", "version": 2, "lab": {"name": "host-commands"}, "nodes": [
        {"id": "h1", "name": "h1", "kind": "host", "startup_commands": [f"id > {witness}"]}], "links": []}))
    lab.chmod(0o644)
    before = snapshot()
    refused = agent.vtopo(users["a"].pw_name, "deploy", "--allow-commands", "h1", str(lab))
    assert refused.returncode == 2 and refused.stderr.strip() == (
        "error: node h1 at $.nodes[0].startup_commands: only root may run startup commands on h1: it is the host's "
        "own namespace, so they would run on the host itself, outside the lab; remove them, or ask an administrator "
        "to deploy the lab"), refused.stderr
    assert not witness.exists() and snapshot() - before == {}


@pytest.mark.parametrize("where", ["port", "flow"])
def test_a_number_of_5000_digits_in_a_string_is_one_problem_with_its_path(agent, users, readable_dir, where):
    document = json.loads((TOPOLOGIES / "ovs-openflow.vtopo").read_text())
    if where == "port":
        document["links"][0]["b"]["port"] = "p" + "5" * 5000
        path = "$.links[0].b.port"
    else:
        switch = next(index for index, node in enumerate(document["nodes"]) if node["kind"] == "ovs")
        document["nodes"][switch]["settings"]["flows"] = ["in_port=" + "7" * 5000 + ",actions=drop"]
        path = f"$.nodes[{switch}].settings.flows[0]"
    lab = readable_dir / "digits.vtopo"
    lab.write_text(json.dumps(document))
    lab.chmod(0o644)
    said = f"error: at {path}: this value holds a number of 5,000 digits; numbers in a lab file have at most 20"
    for verb in (["deploy"], ["validate"], ["plan", "--explain"], ["show"]):
        result = agent.vtopo(users["a"].pw_name, *verb, str(lab))
        assert (result.returncode, result.stderr.strip()) == (2, said), verb
