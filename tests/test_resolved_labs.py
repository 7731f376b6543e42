"""A deployed lab resolved once: the agent's labs resolved hold while the record holds the lab they were resolved
from, and a link's impairment set live makes, without resolving, the lab and the plan that resolving it would."""
from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

from vtopo import ops as o
from vtopo.compile.compiler import compile_plan
from vtopo.compile.links import shaped_links
from vtopo.compile.resolve import resolve
from vtopo.host.lab_parts import Compiled, compiled_from
from vtopo.host.resolved_labs import ResolvedLabs
from vtopo.host.state import SHAPED_LINKS, LabRecord, Operated
from vtopo.kinds.contract import SWITCH_PORT
from vtopo.lab import open_lab, registry
from vtopo.lab_record import consent_to_json
from vtopo.lab_terms import HostFacts, LabOwner, Trust
from vtopo.model import io
from vtopo.model.topology import Impairment, Topology
from vtopo.resources import TOPOLOGIES

MEMBER, OTHER = LabOwner(1001, 1001, (100000, 65536)), LabOwner(1002, 1002, (165536, 65536))


def lab_with_a_rate(rate_mbit: float) -> Topology:
    topology = open_lab(TOPOLOGIES / "bridge-veth.vtopo").topology
    link = next(iter(topology.links.values()))
    link.impairment = Impairment(rate_mbit=rate_mbit)
    return replace(topology, prefix="rl")


def recorded(labs: Path, topology: Topology, owner: LabOwner) -> LabRecord:
    """A record as a deploy writes it, of `topology` deployed by `owner` (under prefix "rl"), in the test's own
    directory `labs`: a deploy gives its directory to the vtopo group, which a plain user running the test may not."""
    record = LabRecord(labs / "rl")
    record.directory.mkdir(parents=True, exist_ok=True)
    record.write({"name": topology.name, "prefix": "rl", "topology": io.to_document(topology),
                  "facts": asdict(HostFacts()), "consent": consent_to_json(Trust(owner=owner))})
    return record


def test_a_rate_set_live_makes_the_lab_and_plan_a_resolve_of_the_lab_so_changed_makes(tmp_path):
    before = lab_with_a_rate(10)
    compiled = compiled_from(recorded(tmp_path, before, MEMBER), registry())
    link = next(iter(compiled.topology.links.values()))
    owner = f"link {compiled.topology.describe_link(link)}"
    changed = Impairment(rate_mbit=20, delay_ms=5)
    ops = [replace(op, rate_mbit=20, delay_ms=5) for op in compiled.plan.ops
           if isinstance(op, o.SetImpairment) and op.owner == owner]
    assert ops
    after = compiled.with_impairment(link.id, changed, list(ops))
    resolved = resolve(after.topology, registry(), HostFacts(), Trust(owner=MEMBER))
    assert after.plan.ops == compile_plan(resolved).ops == compile_plan(after.resolved).ops
    assert {end.link.impairment.rate_mbit for end in after.lab.ends if end.link.id == link.id} == {20}
    assert {end.link.impairment.rate_mbit for end in compiled.lab.ends if end.link.id == link.id} == {10}
    assert link.impairment.rate_mbit == 10  # the lab before is left as it was


def test_a_lab_is_resolved_once_while_its_record_holds_it_and_again_once_another_lab_takes_its_place(tmp_path):
    record = recorded(tmp_path, lab_with_a_rate(10), MEMBER)
    labs = ResolvedLabs(registry())
    first = labs.of(record)
    record.write_operated(Operated({"h1"}, set()))  # a node stopped: the same lab
    assert labs.of(record) is first
    theirs = recorded(tmp_path, lab_with_a_rate(10), OTHER)  # another member's lab under the same prefix, destroyed and
    # deployed again: the same file, another owner
    assert labs.of(theirs) is not first
    assert labs.of(theirs).resolved.lab.trust.owner == OTHER
    kept = Compiled(first.topology, first.resolved, first.plan)
    labs.keep(theirs, kept)
    assert labs.of(theirs) is kept
    record.write({**record.read(), "topology": io.to_document(lab_with_a_rate(30))})  # the lab changed (an update)
    assert labs.of(record) is not kept


def test_a_link_whose_rate_is_set_back_to_none_is_resolved_again_on_the_medium_its_deploy_made(tmp_path):
    """A container's link to a userspace OVS deployed with a rate is a veth pair (the switch's own port has no queue to
    shape). Its rate set back to 0 live, the lab resolved again from its record (the agent restarted, the record
    updated) is still made of that veth, as the host has it: the medium is what the deploy made, not what the rate
    is now. A lab deployed so from the start makes the switch's port."""
    topology = replace(open_lab(TOPOLOGIES / "ovs-openflow.vtopo").topology, prefix="rl")
    link = topology.links["c1-eth0--sw-p1"]
    link.impairment = Impairment(rate_mbit=10)
    deployed = resolve(topology, registry(), HostFacts(), Trust(owner=MEMBER)).valid().lab
    record = recorded(tmp_path, topology, MEMBER)
    record.write({**record.read(), SHAPED_LINKS: {link_id: shaped.to_json()
                                                  for link_id, shaped in shaped_links(deployed).items()}})
    link.impairment = Impairment()  # what `vtopo link ... set --rate 0` writes
    record.write_topology(topology)
    again = compiled_from(record, registry())
    assert {end.medium for end in again.lab.ends if end.link.id == link.id} == {"veth"}
    veths = [op for op in again.plan.ops if isinstance(op, o.CreateVeth) and op.owner.startswith("link c1:eth0")]
    assert len(veths) == 1
    fresh = resolve(topology, registry(), HostFacts(), Trust(owner=MEMBER)).valid().lab
    assert {end.medium for end in fresh.ends if end.link.id == link.id} == {SWITCH_PORT}
