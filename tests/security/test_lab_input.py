"""Attacks 1 (the agent's side) and 11: what a member's lab file and consent may ask for. Startup commands on a node
without a namespace would run as root on the host: a member's --allow-commands on one is refused in one line. A
number of 5,000 digits inside a string is one problem with its JSON path, through the agent as on the command line."""
from __future__ import annotations

import json

import pytest

from residue import snapshot
from security.members import deployed_by, one_line, saved, tiny_lab
from vtopo.model import io
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


INVISIBLE = "a lab's name may hold no invisible or direction-changing character, and this one holds "


@pytest.mark.parametrize("name, refusal", [
    ("exam\u200b", f"{INVISIBLE}U+200B (zero width space)"),
    ("\u200fmaxe", f"{INVISIBLE}U+200F (right-to-left mark)"),
    ("ex\u00adam", f"{INVISIBLE}U+00AD (soft hyphen)"),
    ("exam\U000e0041", f"{INVISIBLE}U+E0041 (tag latin capital letter a)"),
    ("\u0435xam", "a lab's name must be written in one script, and this one mixes Latin with Cyrillic: U+0435 "
                  "(cyrillic small letter ie)"),
    ("exam\u0301", "a lab's name must be written with whole letters, and this one holds U+0301 (combining acute "
                   "accent) where Unicode has the letter it makes (NFC): write 'exa\u1e3f'"),
    ("exam\u0338", "a lab's name may hold no combining mark that is not its script's own, and this one holds U+0338 "
                   "(combining long solidus overlay)"),
])
def test_a_lab_name_that_reads_as_another_is_refused_naming_the_field(agent, users, readable_dir, name, refusal):
    """b's lab named "exam" and a zero-width space would be listed to everyone, the teacher first, as a second "exam"
    beside a's; a right-to-left mark shows "maxe" as "exam", and so does a Cyrillic е among Latin letters, or a
    combining mark on the m. Each is refused in one line naming the field and the character, whether the name is
    written in the file or is the file's own name; a's lab keeps a zero-width joiner in its notes (an emoji)."""
    a, b = users["a"].pw_name, users["b"].pw_name
    (readable_dir / "b").mkdir(mode=0o755)
    topology = io.load(tiny_lab(readable_dir, "exam"))
    topology.notes = "pair work \U0001f469\u200d\U0001f4bb"
    with deployed_by(agent, a, saved(topology, readable_dir)):
        named = tiny_lab(readable_dir / "b", "exam")
        document = json.loads(named.read_text())
        document["lab"]["name"] = name
        named.write_text(json.dumps(document))
        unnamed = readable_dir / "b" / f"{name}.vtopo"
        del document["lab"]["name"]
        unnamed.write_text(json.dumps(document))
        unnamed.chmod(0o644)
        said = f"error: at $.lab.name: {refusal}"
        before = snapshot()
        assert one_line(agent.vtopo(b, "deploy", str(named))) == said
        assert one_line(agent.vtopo(b, "deploy", str(unnamed))) == f"{said} (it is its file's name): name it in lab.name"
        assert snapshot() - before == {}
        listed = agent.vtopo(None, "status").stdout
        assert listed.count("lab exam") == 1 and f"owner {a}: running" in listed, listed
