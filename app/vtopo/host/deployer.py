"""Deploy, destroy, status and cleanup of labs: the executor's front door. Only the agent uses it (server/jobs.py): the
CLI and the designer reach it through the agent, or, for root when none listens, through one their own process runs.

deploy = preflight, then every op of the plan in order, each recorded in the lab's journal before it runs.
If an op fails, everything applied so far is undone in reverse order and the lab's state is forgotten.
destroy = the inverses of the journal's ops, newest first. Nothing is ever touched that the lab did not make.
"""
from __future__ import annotations

import ipaddress
import pwd
import threading
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from vtopo import ops as o
from vtopo.compile.addresses import host_namespace_addresses
from vtopo.compile.compiler import compile_plan
from vtopo.compile.links import shaped_links
from vtopo.compile.plan import Plan, Step
from vtopo.compile.resolve import resolve
from vtopo.host import facts as host_facts
from vtopo.host import image_store, libvirtd, namespace_maker, owned_files, preflight
from vtopo.host.services import Services, services_of
from vtopo.host.preflight import PreflightFailed
from vtopo.host.lab_parts import Compiled, LabParts
from vtopo.host.state import HOST_NETWORKS, SHAPED_LINKS, Journal, LabRecord, StateStore, Usage
from vtopo.lab_record import consent_of, consent_to_json, topology_of
from vtopo.kinds.contract import LabContext, image_of, resources_of
from vtopo.lab_terms import LAB_USER, HostFacts, LabNames, LabOwner, Trust, default_prefix, namespaces_root
from vtopo.kinds.registry import Registry, installed_kinds
from vtopo.kinds.trust import held_by_lab_problem, overlapped
from vtopo.model import io
from vtopo.model.problems import LabError, Problem
from vtopo.model.topology import Topology
from vtopo.reports import (OUTPUT_STAGE, DeployReport, LabEntry, LabStatus, Progress, ProgressCallback,
                           user_name)

if TYPE_CHECKING:  # pyroute2 loads with the applier, when a lab is applied or probed: not for a status of no labs
    from vtopo.host.applier import Applier, OpFailed

OVS_BATCHED = (o.OvsAddBridge, o.OvsAddPort)
TOGETHER = (o.RunImage,)  # each waits on the OCI engine's process: applied at once (Applier.apply_together)
PARTIAL_ON_FAILURE = (o.StartProcess,)  # may have started something even though it failed


def _quiet(_: Progress) -> None:
    pass


Admission = Callable[[LabContext, list[LabRecord]], None]
"""What may refuse a lab before anything is built (the agent's quotas and consent rules): it sees the lab in context and
every other deployed lab, and raises to refuse."""


def _admit_all(_lab: LabContext, _others: list[LabRecord]) -> None:
    pass


def usage_of(context: LabContext) -> Usage:
    """The lab's nodes, and the memory and CPU its VMs and its nodes from images may take."""
    images = [image for node in context.nodes.values() if (image := image_of(node)) is not None]
    taken = [resources_of(node) for node in context.nodes.values()]
    return Usage(len(context.nodes), sum(memory for memory, _ in taken) + sum(image.memory_mb for image in images),
                 sum(100 * cpus for _, cpus in taken) + sum(image.cpu_percent for image in images))


def _shaped_links_json(context: LabContext) -> dict[str, Any]:
    """Each link's medium and impaired devices as the lab's record keeps them (vtopo.host.state.shaped_links_of)."""
    return {link: shaped.to_json() for link, shaped in shaped_links(context).items()}


def host_networks_of(context: LabContext) -> list[str]:
    """The subnets the lab gives the host's own namespace: of its host addresses, each with its connected route."""
    return sorted({str(ipaddress.ip_interface(address).network) for address, _, _ in host_namespace_addresses(context)})


def refuse_held_host_networks(context: LabContext, others: list[LabRecord]) -> None:
    """Raise LabError, a problem for each address, when the lab would give the host's namespace an address whose
    subnet overlaps one another deployed lab gives it: the host's traffic to that lab would go into this one. Runs
    under the state store's lock, where every lab's record holds its subnets before it builds anything, so of two labs
    deployed at the same moment the second sees the first."""
    held: list[tuple[str, str, list[str]]] = []
    for record in others:
        try:
            if networks := record.host_networks():
                held.append((record.name, user_name(record.owner), networks))
        except FileNotFoundError:  # destroyed meanwhile
            continue
    problems = [Problem(held_by_lab_problem(address, lab, owner), subject, subject_id=subject_id)
                for address, subject, subject_id in host_namespace_addresses(context)
                for lab, owner, networks in held if overlapped(address, networks)]
    if problems:
        raise LabError(problems)


def admitting(admit: Admission) -> Admission:
    """`admit` (the agent's rules for its caller) after the rule for every lab, whoever deploys it: the subnets it
    gives the host are free (see `refuse_held_host_networks`)."""
    def admitted(lab: LabContext, others: list[LabRecord]) -> None:
        refuse_held_host_networks(lab, others)
        admit(lab, others)
    return admitted


ROLLED_BACK = "the host is as it was; fix that and deploy again"
RUNS_ON = "the lab runs on as it was; fix that and update again"
REBUILT = "the lab was deployed again as it ran before the update, its nodes restarted; fix that and update again"
LOST = "the update had failed, and so did deploying the lab again as it ran before it: it is not deployed"


class DeployError(Exception):
    """A deploy that failed and was rolled back (or, if `rolled_back` is False, needs `vtopo cleanup`).

    The message is one line: what failed, where, and what to do. `details` holds the rest."""

    def __init__(self, failure: OpFailed, rolled_back: bool, rollback_errors: list[str],
                 advice: str = ROLLED_BACK):
        self.failure = failure
        self.rolled_back = rolled_back
        self.rollback_errors = rollback_errors
        reason = failure.reason.strip().splitlines()[0] if failure.reason.strip() else "no reason given"
        advice = advice if rolled_back else "the rollback was incomplete; run `vtopo cleanup`"
        super().__init__(f"{failure.op.owner}: could not {failure.op.summary()}: {reason} ({advice})")
        self.details = "\n".join([f"failed: {failure}",
                                   "everything applied before it was rolled back" if rolled_back else
                                   "the rollback failed at:", *rollback_errors])


class DestroyError(Exception):
    pass


class DeployCancelled(Exception):
    """The user cancelled a deploy: what it had applied was rolled back."""


def _output_to(progress: ProgressCallback) -> Callable[[o.RunCommand, str], None]:
    """What a startup command printed, as progress of the stage "output" (the deploy log shows it)."""
    def show(op: o.RunCommand, text: str) -> None:
        progress(Progress(OUTPUT_STAGE, 0, 0, f"$ {op.command}\n{text}".rstrip("\n"), op.owner))
    return show


def _inverse(op: o.Op) -> list[o.Op]:
    inverse = op.inverse()
    return [] if inverse is None else [inverse]


def taking_away(removed: list[o.Op]) -> Callable[[o.Op], list[o.Op] | None]:
    """How each of `removed` goes from a running lab whose other ops stay: by its inverse; an interface in a namespace
    that stays, which would go only with its namespace, is deleted; an address on an interface that stays, and a
    route in a namespace that stays, are removed; what lives only on an interface or in a namespace that goes, goes
    with it. None for an op that would stay (a file that only its lab's directory takes away)."""
    gone = frozenset().union(*(op.provides() for op in removed))

    def way(op: o.Op) -> list[o.Op] | None:
        devices = [resource.removeprefix("dev:").split("/", 1) for resource in op.provides()
                   if resource.startswith("dev:")]
        if op.inverse() is not None:
            return _inverse(op)
        if devices:  # an interface on the host goes as a lingering end (see _undo_all)
            return [o.DeleteLink(owner=op.owner, name=name, netns=netns) for netns, name in sorted(devices)
                    if netns != o.HOST and o.ns_resource(netns) not in gone]
        if isinstance(op, o.AddAddress) and o.dev_resource(op.netns, op.name) not in gone or \
                isinstance(op, o.AddRoute) and o.ns_resource(op.netns) not in gone:
            return [op.removal()]
        return [] if op.requires() & gone else None

    return way


def _taking_away_alone(removed: list[o.Op]) -> Callable[[o.Op], list[o.Op]]:
    """`taking_away`, where what would stay is left as it is."""
    way = taking_away(removed)
    return lambda op: way(op) or []


def lab_owner(uid: int, host_identities: bool = False) -> LabOwner:
    """Who owns a lab deployed by `uid`: a member's lab maps them and their group to root of its user namespace; root's
    maps LAB_USER, or nobody with `host_identities` (its nodes are the host's root, its routers the host's frr)."""
    if uid:
        return LabOwner.member(uid, pwd.getpwuid(uid).pw_gid)
    if host_identities:
        return LabOwner()
    try:
        account = pwd.getpwnam(LAB_USER)
    except KeyError:
        raise PreflightFailed([Problem(f"root's labs run as the unprivileged user {LAB_USER}, which does not exist; "
                                       f"create it with `useradd --system --no-create-home --shell /usr/sbin/nologin "
                                       f"{LAB_USER}` (or run `make setup`)", "this host")]) from None
    return LabOwner(0, 0, (account.pw_uid, account.pw_gid))


class Deployer:
    def __init__(self, store: StateStore | None = None, facts: HostFacts | None = None,
                 kinds: Registry | None = None):
        self.store = store or StateStore()
        self.services = Services(self.store)
        self._facts = facts
        self.kinds = kinds or installed_kinds()
        self._cancelled = threading.Event()
        self.compiled: Compiled | None = None  # what its last deploy compiled, once the lab is built

    def cancel(self, lab: str = "") -> None:
        """Stop the deploy this deployer runs (of `lab`) after the operation in progress, and roll it back; from any
        thread."""
        self._cancelled.set()

    def _check_cancelled(self, lab: str) -> None:
        if self._cancelled.is_set():
            raise DeployCancelled(f"the deploy of lab {lab} was cancelled; everything it had applied was rolled back")

    def facts_for(self, topology: Topology, owner: int = 0) -> HostFacts:
        """The host's facts for a lab of uid `owner` (the images are theirs and the shared ones)."""
        if self._facts is not None:
            return self._facts
        return host_facts.probe_for(topology, self.kinds, owner)

    # ------------------------------------------------------------ deploy

    def deploy(self, topology: Topology, progress: ProgressCallback = _quiet, source: Path | None = None,
               consent: Trust = Trust(), owner: int = 0, admit: Admission = _admit_all,
               host_identities: bool = False) -> DeployReport:
        """Build the lab. `consent` is what the user allowed beyond the lab (host devices, image files); the
        lab is compiled against it and against the host's own network, probed now. `owner` is the uid recorded
        as the lab's owner (the agent's caller; root in-process); with `host_identities`, root's lab runs as the host's
        root rather than in a user namespace (see lab_owner). The lab's name must be free on the host; vtopo
        chooses its prefix (see StateStore.claim), and `admit` may refuse it, seeing it in context and the other
        deployed labs, before anything is built."""
        from vtopo.host.applier import Applier

        started = time.monotonic()
        self._check_cancelled(topology.name)
        facts = self.facts_for(topology, owner)
        consent = replace(consent, owner=lab_owner(owner, host_identities))
        trust = host_facts.with_host_network(consent)
        document, hint = io.to_document(topology), topology.prefix  # as the user gave it, which the designer edits
        topology = replace(topology, prefix=hint or default_prefix(topology.name))
        resolved = resolve(topology, self.kinds, facts, trust)
        plan, context = compile_plan(resolved), resolved.this_site
        progress(Progress("preflight", 0, 1, "checking privileges, tools and names"))
        preflight.require_privileges()
        services = services_of(plan)
        usage = usage_of(context)

        def lab(prefix: str) -> dict[str, Any]:
            return {"name": topology.name, "prefix": prefix, "source": str(source or ""), "facts": asdict(facts),
                    "consent": consent_to_json(consent), "owner": owner, "services": services,
                    "usage": asdict(usage), HOST_NETWORKS: host_networks_of(context),
                    SHAPED_LINKS: _shaped_links_json(context), "topology": document}

        record = self.store.claim(topology.name, hint, lab, lambda others: admitting(admit)(context, others))
        notices = [str(w) for w in plan.warnings] + self._backend_notices(topology, facts)
        applier: Applier | None = None
        try:
            if record.prefix != plan.prefix:  # a deployed lab holds the prefix the name gives: the lab gets another
                topology = replace(topology, prefix=record.prefix)
                resolved = resolve(topology, self.kinds, facts, trust)
                plan, context = compile_plan(resolved), resolved.this_site
                record.write({**record.read(), SHAPED_LINKS: _shaped_links_json(context)})  # its devices' new names
            applier = Applier(record.prefix, _output_to(progress), owner)
            preflight.check(plan, context, applier.netlink)
            notices += self.services.ensure(services)
        except BaseException:
            if applier is not None:
                applier.close()
            self._forget(record)
            raise
        try:
            self._apply(plan.steps, applier, record, progress, topology.name)
            notices += applier.notices
        finally:
            applier.close()
        self.compiled = Compiled(topology, resolved, plan)
        nodes = len(topology.nodes)
        return DeployReport(topology.name, plan.prefix, nodes, len(topology.links), len(plan.steps),
                            time.monotonic() - started, notices)

    def update(self, topology: Topology, progress: ProgressCallback = _quiet, source: Path | None = None,
               consent: Trust = Trust(), owner: int = 0) -> DeployReport:
        """Bring the deployed lab of the topology's name in line with the edited topology (see `update_record`)."""
        return self.update_record(self.store.named(topology.name), topology, progress, source, consent, owner)

    def update_record(self, record: LabRecord | None, topology: Topology, progress: ProgressCallback = _quiet,
                      source: Path | None = None, consent: Trust = Trust(), owner: int = 0,
                      admit: Admission = _admit_all) -> DeployReport:
        """Bring the deployed lab `record` in line with an edited topology (or deploy it if `record` is None).

        Only what the edit changes is taken away (with what was built on it, which is made again: a router's daemons
        restart with a new address) and applied: a node or link added or removed, an address or a route changed, a
        link's tunnel that now goes to another site, and the rest runs on. What cannot go alone makes it a destroy
        and a fresh deploy, and the report says so. When the change fails, the lab is put back as it ran: in place, or,
        after a destroy, deployed again from its record (see `_rebuild`). The lab keeps its prefix, and its owner.
        """
        self._cancelled.clear()
        if record is None:
            return self.deploy(topology, progress, source, consent, owner, admit)
        with record.locked():  # a live change to the running lab (vtopo.lab_operations) finishes first
            return self._update(record, topology, progress, source, consent, admit)

    def _update(self, record: LabRecord, topology: Topology, progress: ProgressCallback, source: Path | None,
                consent: Trust, admit: Admission) -> DeployReport:
        started = time.monotonic()
        edited = topology
        consent = replace(consent, owner=record.consent().owner)
        trust = host_facts.with_host_network(consent)
        topology = replace(edited, prefix=record.prefix)
        resolved = resolve(topology, self.kinds, record.facts(), trust)
        plan, context = compile_plan(resolved), resolved.this_site
        journal = record.journal()
        removed = self._taken_away(record, journal, set(plan.ops))
        if removed is not None:
            before, networks = record.read(), host_networks_of(context)
            while_changing = sorted({*record.host_networks(), *networks})  # its own, old and new, stay its own
            self.store.admit(record, lambda others: admitting(admit)(context, others), {HOST_NETWORKS: while_changing})
            staying = set(journal).difference(removed)
            new_steps = [step for step in plan.steps if step.op not in staying]
            self._change(record, before, plan, context, removed, new_steps, progress)
            data = record.read()
            data.update({HOST_NETWORKS: networks, SHAPED_LINKS: _shaped_links_json(context)},
                        topology=io.to_document(edited),
                        source=str(source or data.get("source", "")), consent=consent_to_json(consent))
            record.write(data)
            took = f" and took away {len(removed)}" if removed else ""
            notice = (f"applied only the {len(new_steps)} new operations{took}; the rest of the lab kept running"
                      if new_steps or removed else "the running lab already matches; nothing to apply")
            return DeployReport(topology.name, plan.prefix, len(topology.nodes), len(topology.links),
                                len(new_steps) + len(removed), time.monotonic() - started, [notice])
        report = self._rebuild(record, edited, progress, source, consent, admit)
        report.notices.insert(0, "the edit changes or removes parts of the running lab, so it was destroyed and "
                                 "deployed again")
        report.seconds = time.monotonic() - started
        return report

    def _rebuild(self, record: LabRecord, edited: Topology, progress: ProgressCallback, source: Path | None,
                 consent: Trust, admit: Admission) -> DeployReport:
        """Destroy the running lab and deploy `edited`; when that deploy fails, the lab as it ran is deployed again
        (under its prefix, from its record), and the error says so."""
        before = record.read()
        self.destroy(record, progress)
        host_identities = consent.owner.ids is None
        try:
            return self.deploy(edited, progress, source, consent, consent.owner.uid, admit, host_identities)
        except BaseException as failure:
            if isinstance(failure, DeployError) and not failure.rolled_back:
                raise
            self._cancelled.clear()  # a cancelled update is put back whole
            ran = topology_of(before)
            try:
                self.deploy(ran, progress, Path(before["source"]) if before.get("source") else None,
                            consent_of(before), before.get("owner", 0), admit, host_identities)
            except DeployError as lost:
                raise DeployError(lost.failure, True, [], LOST) from failure
            again = self.store.named(ran.name)
            assert again is not None
            again.write({**again.read(), "topology": before["topology"]})  # with its file's prefix hint, as before
            if isinstance(failure, DeployError):
                raise DeployError(failure.failure, True, [], REBUILT) from None
            raise

    def _taken_away(self, record: LabRecord, journal: list[o.Op], wanted: set[o.Op]) -> list[o.Op] | None:
        """What an edit takes away from the running lab (whose ops are `journal`): the ops it no longer has, and those
        it keeps that were built on them (they are made again); None when that cannot go while the rest runs on (see
        `taking_away`)."""
        gone = {op for op in journal if op not in wanted}
        if not gone:
            return []
        running = compile_plan(resolve(record.topology(), self.kinds, record.facts(), record.consent(), record.media()))
        ops = {step.index: step.op for step in running.steps}
        for step in running.steps:  # in order: each op after those it is built on
            if any(ops[dep] in gone for dep in step.deps):
                gone.add(step.op)
        removed = [op for op in journal if op in gone]
        way = taking_away(removed)
        return removed if all(way(op) is not None for op in removed) else None

    def _change(self, record: LabRecord, before: dict[str, Any], plan: Plan, context: LabContext, removed: list[o.Op],
                new_steps: list[Step], progress: ProgressCallback) -> None:
        """Take `removed` away from the running lab, then apply `new_steps`; when anything fails, what was applied is
        rolled back and what was taken away is made again, so the lab runs as before, and its record is `before`."""
        from vtopo.host.applier import Applier

        applier = Applier(plan.prefix, _output_to(progress), record.owner)
        try:
            self._remove(removed, applier, record, progress)
            try:
                preflight.check(Plan(plan.lab_name, plan.prefix, plan.run_dir, new_steps), context, applier.netlink)
                record.write({**record.read(), "services": services_of(plan), "usage": asdict(usage_of(context))})
                self.services.ensure(services_of(plan))
                self._apply(new_steps, applier, record, progress, plan.lab_name, keep_record=True)
            except BaseException:
                record.write(before)
                restore = [Step(index, op, tuple(range(index))) for index, op in enumerate(removed)]
                self._cancelled.clear()  # a cancelled update is put back whole
                self._apply(restore, applier, record, progress, plan.lab_name, keep_record=True)
                raise
        finally:
            applier.close()

    def _remove(self, removed: list[o.Op], applier: Applier, record: LabRecord, progress: ProgressCallback) -> None:
        if not removed:
            return
        errors = self._undo_all(removed, applier, "remove", progress, _taking_away_alone(removed))
        if errors:
            raise DestroyError("the update could not take away what the edit removes:\n" + "\n".join(errors)
                               + "\nrun `vtopo destroy` or `vtopo cleanup`")
        gone = set(removed)
        record.replace_in_journal(lambda op: op in gone, [])

    def _backend_notices(self, topology: Topology, facts: HostFacts) -> list[str]:
        if topology.vm_backend not in ("", "auto") or facts.libvirt or not host_facts.runs_vms(topology, self.kinds):
            return []
        if not libvirtd.module_installed():
            return [f"{libvirtd.MISSING_MODULE}, so the VMs run as plain QEMU processes, not libvirt domains"]
        return [f"libvirtd does not answer at {facts.libvirt_uri}, so the VMs run as plain QEMU processes, not "
                "libvirt domains (start libvirtd, or set the lab's vm_backend to libvirt)"]

    def _apply(self, steps: list[Step], applier: Applier, record: LabRecord, progress: ProgressCallback,
               lab: str, keep_record: bool = False) -> None:
        """Each step in order, or (when one fails, or the deploy is cancelled between two) none. A rollback forgets
        the lab's record, unless `keep_record` (the steps change a running lab): then its journal drops them."""
        from vtopo.host.applier import OpFailed

        journal = Journal(record.directory / "journal.jsonl")
        applied: list[o.Op] = []
        pending: list[o.Op] = []
        pending_steps: set[int] = set()
        together: list[o.Op] = []
        together_steps: set[int] = set()
        total = len(steps)

        def run(op: o.Op) -> None:
            self._check_cancelled(lab)
            journal.record(op)
            applied.append(op)
            progress(Progress("apply", len(applied), total, op.doing(), op.owner))
            applier.apply(op)

        def taken(ops: list[o.Op], steps_of: set[int], doing: str) -> list[o.Op]:
            """Ops applied at once, journaled and said as one step; their lists emptied."""
            self._check_cancelled(lab)
            for op in ops:
                journal.record(op)
                applied.append(op)
            progress(Progress("apply", len(applied), total, doing, ops[0].owner))
            batch = list(ops)
            ops.clear()
            steps_of.clear()
            return batch

        def flush() -> None:
            if pending:
                applier.apply_ovs_batch(taken(pending, pending_steps,
                                              f"{len(pending)} Open vSwitch changes in one transaction"))

        def start_together() -> None:
            if together:
                applier.apply_together(taken(together, together_steps,
                                             f"{len(together)} nodes started from their images together"))

        applier.expect([step.op for step in steps])
        try:
            for step in steps:
                if isinstance(step.op, OVS_BATCHED):
                    pending.append(step.op)
                    pending_steps.add(step.index)
                    continue
                if isinstance(step.op, TOGETHER) and not together_steps.intersection(step.deps):
                    if pending_steps.intersection(step.deps):
                        flush()
                    together.append(step.op)
                    together_steps.add(step.index)
                    continue
                if pending_steps.intersection(step.deps):
                    flush()
                if together_steps.intersection(step.deps):
                    start_together()
                run(step.op)
            flush()
            start_together()
        except OpFailed as failure:
            errors = self._roll_back(applied, failure.op, applier, record, progress, keep_record)
            raise DeployError(failure, not errors, errors, RUNS_ON if keep_record else ROLLED_BACK) from None
        except DeployCancelled:  # seen between two operations: each one applied is whole, the last one too
            self._roll_back(applied, None, applier, record, progress, keep_record)
            raise
        except BaseException:  # an interrupt or a bug: still leave the host as it was
            self._roll_back(applied, applied[-1] if applied else None, applier, record, progress, keep_record)
            raise
        finally:
            journal.close()

    def _roll_back(self, applied: list[o.Op], failed: o.Op | None, applier: Applier, record: LabRecord,
                   progress: ProgressCallback, keep_record: bool) -> list[str]:
        undo = [op for op in applied if op is not failed or isinstance(op, PARTIAL_ON_FAILURE)]
        errors = self._undo_all(undo, applier, "rollback", progress, _taking_away_alone(undo) if keep_record else
                                _inverse)
        if errors:
            return errors
        if keep_record:
            undone = set(applied)
            record.replace_in_journal(lambda op: op in undone, [])
        else:
            self._forget(record)
        return errors

    def _undo_all(self, applied: list[o.Op], applier: Applier, stage: str, progress: ProgressCallback,
                  undo: Callable[[o.Op], list[o.Op]] = _inverse) -> list[str]:
        from vtopo.host.applier import OpFailed

        inverses = [inverse for op in reversed(applied) for inverse in undo(op)]
        applier.delete_together([inverse.name for inverse in inverses if isinstance(inverse, o.DeleteNamespace)],
                                [path for inverse in inverses
                                 if isinstance(inverse, (o.RemoveNamespaceFiles, o.RemoveImageContainer))
                                 for path in inverse.paths])
        errors = []
        for done, inverse in enumerate(inverses, start=1):
            progress(Progress(stage, done, len(inverses), inverse.summary(), inverse.owner))
            try:
                applier.undo(inverse)
            except OpFailed as error:
                errors.append(str(error))
        host_ends = [name for op in applied if isinstance(op, o.CreateVeth) and op.inverse() is None
                     for name in op.host_ends()]
        try:
            lingering = applier.remove_lingering(host_ends)
        except OpFailed as error:
            errors.append(str(error))
        else:
            if lingering:
                errors.append(f"the kernel did not remove {', '.join(lingering)}")
        return errors

    # ------------------------------------------------------------ destroy

    def destroy(self, lab: str | LabRecord, progress: ProgressCallback = _quiet) -> int:
        """Undo everything the journal of the lab (named `lab`, or its record) says was applied. Returns the number
        of undo steps."""
        record = self.store.named(lab) if isinstance(lab, str) else lab
        if record is None:
            raise DestroyError(self.store.not_found(str(lab)))
        return self._destroy_record(record, progress)

    def _destroy_record(self, record: LabRecord, progress: ProgressCallback) -> int:
        from vtopo.host.applier import Applier

        applied = record.journal()
        applier = Applier(record.prefix)
        try:
            errors = self._undo_all(applied, applier, "destroy", progress)
        finally:
            applier.close()
        if errors:
            raise DestroyError("destroy was incomplete:\n" + "\n".join(errors) + "\nrun `vtopo cleanup` to retry")
        self._forget(record)
        return len(applied)

    def _forget(self, record: LabRecord) -> None:
        run_root = Path(record.facts().run_root)
        self.store.forget(record)
        image_store.release_unused_roots()
        namespace_maker.remove_lab_directory(LabNames(record.prefix, str(run_root)).namespaces_dir)  # one no teardown took
        namespace_maker.release_directory(namespaces_root(str(run_root)))
        owned_files.remove_if_empty(run_root)
        self.services.release_unused()

    # ------------------------------------------------------------ status

    def labs(self) -> list[LabEntry]:
        return [LabEntry(record.name, record.owner) for record in self.store.labs()]

    def status(self, lab: str | None = None) -> list[LabStatus]:
        """Every deployed lab's status, or the one named `lab`'s, probed on the host: each operation's work looked
        for, each link's interfaces asked whether they are up."""
        return [self.probe(parts) for parts in self.parts(lab)]

    def parts(self, lab: str | None = None) -> list[LabParts]:
        """Every deployed lab's plan by part, or the one named `lab`'s."""
        if lab is None:
            records = list(self.store.labs())
        elif (named := self.store.named(lab)) is not None:
            records = [named]
        else:
            raise DestroyError(self.store.not_found(lab))
        return [LabParts(record, self.kinds) for record in records]

    @staticmethod
    def probe(parts: LabParts) -> LabStatus:
        """The lab's status as the host has it now: what each node and link made exists, and its interfaces are up."""
        from vtopo.host.applier import Applier

        applier = Applier(parts.record.prefix)
        try:
            return parts.status(applier.exists, lambda interface: not applier.up(interface.name, interface.netns))
        finally:
            applier.close()
