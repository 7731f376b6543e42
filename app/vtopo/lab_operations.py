"""Operating a running lab: stop, start and restart a node, take a link down and up, change a link's impairment.

What is stopped or down is written to the lab's record before the host is touched, so `vtopo status` shows it and
destroy and `vtopo cleanup` stay exact: a stopped node's daemons are already gone (their stop is a no-op then), its
frozen processes are killed with its namespace, and a down link's devices go the way they always go.

- A stopped container or router keeps its namespace; its interfaces go down (its neighbours lose carrier), the
  processes inside are frozen (SIGSTOP) and the daemons vtopo started for it (zebra, ospfd...) are stopped. They
  start again with the configuration the lab records (what `vtopo save` last kept).
- A stopped VM is powered off (QEMU ends); its taps stay, and start boots it again on the same taps.
- Start resumes what was frozen (a VM boots afresh, so its startup commands run again). Restart is a container's
  restart: everything running in the node is killed, it starts afresh and its startup commands run again (a node
  from an image starts its image afresh, on a new copy of the image's files).
- A link taken down is a cable pulled wherever the medium allows it: the nodes' interfaces stay up and lose carrier
  (NO-CARRIER), as after a pulled cable or GNS3's link suspend, and routing daemons see the link go at once
  (`RunningLab.pulled_ends` says which end goes down instead, where one must). A link between sites is taken down
  on each of its sites (vtopo.sites.spread_operations), where its end of the tunnel stays up and loses its carrier.

Every change is a plan of ops (vtopo.ops), as a deploy is: a `LiveChange` lists them, the lab's KernelHost applies
them (through the Applier) and, for `--explain`, a ScriptHost writes the same ops as the script of what runs. A link's
new impairment replaces its ops in the journal with the ops that ran, which are those a deploy of the lab so changed
writes; what is stopped and down the lab's record keeps (`Operated`).

Each function takes plain values (lab and node names, link ends, an ImpairmentChange) and returns a one-line summary
(with `explain`, the script it would run, changing nothing): the agent calls them for the CLI and the designer
(vtopo.server.agent_server), and for a checkpoint restored (vtopo.checkpoints).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

from vtopo import ops as o
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.compile.links import impair_device
from vtopo.compile.media import impairment_problem
from vtopo.compile.tunnels import TUNNEL
from vtopo.compile.plan import Plan
from vtopo.host.applier import Applier, OpFailed
from vtopo.host.resolved_labs import ResolvedLabs
from vtopo.host.state import LabRecord, Operated, StateStore, shaped_links_of
from vtopo.kinds.contract import SWITCH_PORT, EndContext, LabContext, NodeContext, Role
from vtopo.kinds.registry import installed_kinds
from vtopo.lab_record import facts_of, topology_of
from vtopo.model.impairment_change import ImpairmentChange
from vtopo.model.topology import Impairment, Link, Topology
from vtopo.ops.script import TOLERATED, comment


class OperateError(Exception):
    """An operation on a running lab that cannot be done; the message names the lab and the node or link."""


NODE_ACTIONS = ("start", "stop", "restart")
PUT_BACK = "there still, or via a link still down: it comes back with that link"


@dataclass(frozen=True)
class Step:
    """An op of a live change. `put_back`: an address or route of an interface that came up again, which may be
    there still (see Applier.put_back)."""

    op: o.Op
    put_back: bool = False


@dataclass
class LiveChange:
    """A change to a running lab: its ops in order, and what the lab's record says is stopped and down before the
    first op runs (so that a crash half-way still knows) and after the last one."""

    steps: list[Step] = field(default_factory=list)
    recorded_first: Operated | None = None
    recorded_last: Operated | None = None

    def add(self, *ops: o.Op) -> None:
        self.steps.extend(Step(op) for op in ops)

    def script(self) -> list[str]:
        """The shell lines of each op, as a ScriptHost writes them: what applying the change runs."""
        lines = []
        for step in self.steps:
            said = o.script_of(step.op)
            if step.put_back:
                said[-1] += f"{TOLERATED} {PUT_BACK}"
            lines += [f"# {comment(step.op.owner)}: {comment(step.op.summary())}", *said]
        return lines


def _as_now(operated: Operated) -> Operated:
    return Operated(set(operated.stopped), set(operated.down))


@dataclass
class RunningLab:
    """A deployed lab as its record knows it, resolved with its plan (by the agent once, and kept: `running_lab`) to
find each node's devices and daemons."""

    record: LabRecord
    topology: Topology
    lowered: Plan | None
    context: LabContext
    applier: Applier
    printed: list[str] = field(default_factory=list)
    """What the startup commands run meanwhile printed, a line each, as `vtopo deploy` shows it ("  c1| ...")."""

    def show_output(self, op: o.RunCommand, text: str) -> None:
        node = op.owner.removeprefix("node ")
        self.printed.extend(f"  {node}| {line}" for line in f"$ {op.command}\n{text}".rstrip("\n").splitlines())

    @property
    def name(self) -> str:
        return self.topology.name

    @property
    def plan(self) -> Plan:
        """The lab's plan as a deploy of it would run now; only a lab opened `lowered` has it."""
        if self.lowered is None:
            raise ValueError(f"lab {self.name} was opened without its plan")
        return self.lowered

    def node(self, name: str) -> NodeContext[Any]:
        node = self.context.node_named(name)
        if node is None:
            raise OperateError(self.context.no_node_named(name))
        return node

    def link(self, a: str, b: str) -> Link:
        """The link between `a` and `b` in the whole lab as compiled, whichever sites its ends are on (a switch
        spanning sites has a copy by its name on some); see `link_between`."""
        return link_between(self.context.topology, a, b)

    def link_name(self, link: Link) -> str:
        return self.context.topology.describe_link(link)

    def ends_of_link(self, link: Link) -> list[EndContext]:
        return [end for end in self.context.ends if end.link.id == link.id and end.device]

    def ends_of_node(self, node: NodeContext[Any]) -> list[EndContext]:
        return [end for end in node.ends if end.device]

    def processes_of(self, node: NodeContext[Any]) -> list[o.Op]:
        """What runs in the node, in plan order: its daemons, or its VM (a QEMU process, or a libvirt domain that is
        created and then resumed)."""
        return [op for op in self.plan.ops if isinstance(op, (o.StartProcess, o.StartDomain, o.ResumeDomain,
                                                                 o.LoadConfig)) and op.owner == node.subject]

    def container_of(self, node: NodeContext[Any]) -> list[o.RunImage]:
        """The container of a node from an image (none for another node)."""
        return [op for op in self.plan.ops if isinstance(op, o.RunImage) and op.owner == node.subject]

    def files_of(self, node: NodeContext[Any]) -> list[o.WriteFile]:
        """The files written for the node (a router's configuration), as the lab records it now: `vtopo save` may
        have changed it since the deploy."""
        return [op for op in self.plan.ops if isinstance(op, o.WriteFile) and op.owner == node.subject]

    def startup_commands_of(self, node: NodeContext[Any]) -> list[o.RunCommand]:
        """The node's startup commands as the deploy ran them (none where the user did not allow them)."""
        return [op for op in self.plan.ops if isinstance(op, o.RunCommand) and op.owner == node.subject]

    def carrier_of(self, ends: list[EndContext], operated: Operated) -> list[Step]:
        """Each end up unless its node is stopped, or its link is down and it is the end pulled (`pulled_ends`); a
        tunnel's end (this site's of a link between sites) without carrier while its link is down. The kernel drops
        an interface's routes (and IPv6 addresses) when it goes down, so where one comes up the plan's addresses and
        routes are put back."""
        came_up: set[str | None] = set()
        pulled = {id(end) for link_id in operated.down for end in self.pulled_ends(self.topology.links[link_id])
                  if link_id in self.topology.links}
        steps = []
        for end in ends:
            up = end.node.name not in operated.stopped and id(end) not in pulled
            carrier = end.link.id not in operated.down if end.medium == TUNNEL else None
            steps.append(Step(o.SetLinkState(owner=f"link {end.link_name}", name=end.device, netns=end.netns, up=up,
                                             carrier=carrier)))
            if up:
                came_up.add(end.netns)
        return steps + [Step(op, put_back=True) for op in self.plan.ops
                        if isinstance(op, (o.AddAddress, o.AddRoute)) and op.netns in came_up]

    def pulled_ends(self, link: Link) -> list[EndContext]:
        """The ends set down when the link is down: as far as the medium allows, a cable pulled, where the nodes'
        interfaces stay up and lose carrier. A tunnel's ends stay up and lose carrier themselves: none is set down.
        A veth's end on a switch goes down, so the node's end loses carrier;
        of a veth between two nodes (where neither end can lose carrier while both stay up) the end of one node goes
        down: one that does not route, so a router keeps its interface, or else the later by name. A device with
        no peer to take down (a macvlan child, a switch's own port, a VM's tap) goes down itself."""
        ends = self.ends_of_link(link)
        if any(end.medium == TUNNEL for end in ends):
            return []
        veths = [end for end in ends if end.medium == "veth"]
        if len(veths) < 2:
            return ends
        on_switch = [end for end in veths if end.kind.role is Role.SWITCH]
        if on_switch:
            return on_switch
        routing = [end.kind.routes(end.owner) for end in veths]
        if routing[0] != routing[1]:
            return [veths[routing.index(False)]]
        return [max(veths, key=lambda end: (end.node.name, end.end.port))]

    def describe_pull(self, link: Link) -> str:
        """What a link down does to its ends (those on this site), as `vtopo link ... down` says it."""
        ends = self.ends_of_link(link)
        if not ends:
            return "it has no end on this site (each site cuts its own)"
        if ends[0].medium == TUNNEL:
            end = ends[0]
            where = _port_names(ends) or f"its port on {end.node.name}"
            return f"{where} stays up without carrier (this site's end of the tunnel is cut)"
        pulled = self.pulled_ends(link)
        down = {id(end) for end in pulled}
        kept = _port_names(end for end in self.ends_of_link(link) if id(end) not in down)
        if kept and pulled[0].kind.role is Role.SWITCH:
            return f"{kept} stays up without carrier, its cable pulled at {pulled[0].node.name}"
        if kept:
            return (f"{kept} stays up without carrier and {_port_names(pulled)} is set down (a veth between two "
                    "nodes cannot lose carrier at both ends)")
        verb = "are" if len(pulled) > 1 else "is"
        return f"{_port_names(pulled)} {verb} set down (a {pulled[0].medium} has no peer whose carrier could be cut)"

    def run(self, change: LiveChange) -> None:
        run_change(self.record, self.applier, change)

    def explain(self, change: LiveChange, doing: str) -> str:
        return explained(change, doing, self.name, self.record.prefix)


def run_change(record: LabRecord, applier: Applier, change: LiveChange) -> None:
    """Apply the change's ops through the lab's KernelHost, the record written as the change says."""
    if change.recorded_first is not None:
        record.write_operated(change.recorded_first)
    for step in change.steps:
        (applier.put_back if step.put_back else applier.apply)(step.op)
    if change.recorded_last is not None:
        record.write_operated(change.recorded_last)


def explained(change: LiveChange, doing: str, lab: str, prefix: str) -> str:
    """The change as a shell script: the lines its ops write on a ScriptHost, which are what `run_change` runs."""
    return "\n".join(["#!/bin/sh", f"# what {comment(doing)} runs on lab {comment(repr(lab))} (its "
                      f"objects are named {prefix}-*); --explain changed nothing", "set -e",
                      *change.script()]) + "\n"


def link_between(topology: Topology, a: str, b: str) -> Link:
    """The link between `a` and `b`, each a node name with an optional ":PORT"; OperateError, saying why, when there
    is none or more than one."""
    (name_a, _, port_a), (name_b, _, port_b) = a.partition(":"), b.partition(":")
    for name in (name_a, name_b):
        if topology.node_named(name) is None:
            raise OperateError(topology.no_node_named(name))
    names = {node_id: node.name for node_id, node in topology.nodes.items()}
    matches = []
    for link in topology.links.values():
        for first, second in ((link.a, link.b), (link.b, link.a)):
            if (names[first.node], names[second.node]) == (name_a, name_b) and port_a in ("", first.port) \
                    and port_b in ("", second.port):
                matches.append(link)
                break
    if not matches:
        raise OperateError(f"lab {topology.name} has no link between {a} and {b}")
    if len(matches) > 1:
        found = ", ".join(topology.describe_link(link) for link in matches)
        raise OperateError(f"{name_a} and {name_b} have {len(matches)} links ({found}) in lab {topology.name}; name "
                           f"the ports, as in {name_a}:PORT {name_b}:PORT")
    return matches[0]


def _record_of(lab: str | LabRecord, store: StateStore | None) -> LabRecord:
    record = (store or StateStore()).named(lab) if isinstance(lab, str) else lab
    if record is None:
        raise OperateError(StateStore.not_found(str(lab)))
    return record


@contextmanager
def _applying(record: LabRecord) -> Iterator[Applier]:
    """An Applier for the lab's ops, run as at its deploy (startup commands as its owner); what the host refuses is
    an OperateError."""
    applier = Applier(record.prefix, owner=record.owner)
    try:
        yield applier
    except OpFailed as failure:
        raise OperateError(str(failure)) from failure
    finally:
        applier.close()


@contextmanager
def running_lab(lab: str | LabRecord, store: StateStore | None = None, *, lowered: bool = True,
                labs: ResolvedLabs | None = None) -> Iterator[RunningLab]:
    """The deployed lab named `lab` (or the record the caller looked up), held against other changes while the block
    runs. `lowered`: with its plan (what runs in its nodes), which what reads the lab alone does without. `labs`:
    the labs resolved already (the agent's), which resolve it only if they do not hold it yet; without, it is
    resolved now."""
    record = _record_of(lab, store)
    with record.locked():
        plan: Plan | None
        if labs is not None:
            compiled = labs.of(record)
            topology, resolved, plan = compiled.topology, compiled.resolved.valid(), compiled.plan
        else:
            topology = record.topology()
            resolved = resolve(topology, installed_kinds(), record.facts(), record.consent(), record.media()).valid()
            plan = compile_plan(resolved) if lowered else None
        with _applying(record) as applier:
            running = RunningLab(record, topology, plan, resolved.this_site, applier)
            applier.on_output = running.show_output
            yield running


def _port_names(ends: Iterable[EndContext]) -> str:
    """The nodes' ports among `ends`, as NODE:PORT (a switch's end of a link is not a port a student sees)."""
    return " and ".join(f"{end.node.name}:{end.end.port}" for end in ends if end.kind.role is not Role.SWITCH)


def _stoppable(lab: RunningLab, node: NodeContext[Any]) -> None:
    if node.kind.role is Role.MACHINE or (node.kind.role is Role.NAMESPACE and node.kind.netns(node) is not None):
        return
    what = "the host's own namespace" if node.kind.role is Role.NAMESPACE else f"a {node.kind.label}"
    raise OperateError(f"{node.node.name} in lab {lab.name} is {what}: it cannot be stopped or started; take its "
                       "links down instead (vtopo link LAB A B down)")


NodeChange = Callable[[RunningLab, NodeContext[Any], Operated, LiveChange], None]


def _on_node(lab: str | LabRecord, node: str, store: StateStore | None, change: NodeChange, words: tuple[str, str],
             explain: bool, labs: ResolvedLabs | None) -> str:
    """Apply `change` to a node that can be stopped, or with `explain` say what it would run; says what was done
    (`words`: the change while it runs, and once done), then what its startup commands printed."""
    doing, done = words
    with running_lab(lab, store, labs=labs) as running:
        target = running.node(node)
        _stoppable(running, target)
        live = LiveChange()
        change(running, target, running.record.operated(), live)
        if explain:
            return running.explain(live, f"{doing} {node}")
        running.run(live)
    return "\n".join([f"{done} {node} in lab {running.name}", *running.printed])


def stop_node(lab: str | LabRecord, node: str, store: StateStore | None = None, *, explain: bool = False,
              labs: ResolvedLabs | None = None) -> str:
    return _on_node(lab, node, store, _stop_running, ("stopping", "stopped"), explain, labs)


def start_node(lab: str | LabRecord, node: str, store: StateStore | None = None, *, explain: bool = False,
               labs: ResolvedLabs | None = None) -> str:
    return _on_node(lab, node, store, _start_stopped, ("starting", "started"), explain, labs)


def restart_node(lab: str | LabRecord, node: str, store: StateStore | None = None, *, explain: bool = False,
                 labs: ResolvedLabs | None = None) -> str:
    return _on_node(lab, node, store, _restart, ("restarting", "restarted"), explain, labs)


def operate_node(lab: str | LabRecord, node: str, action: str, store: StateStore | None = None, *,
                 explain: bool = False, labs: ResolvedLabs | None = None) -> str:
    """`action` is one of NODE_ACTIONS; `lab` a lab's name, or the record the caller looked up; `labs` as for
    `running_lab`."""
    actions = {"start": start_node, "stop": stop_node, "restart": restart_node}
    if action not in actions:
        raise OperateError(f"unknown action {action!r} for node {node}: use {', '.join(NODE_ACTIONS)}")
    return actions[action](lab, node, store, explain=explain, labs=labs)


def _stop_running(running: RunningLab, node: NodeContext[Any], operated: Operated, live: LiveChange) -> None:
    if node.node.name in operated.stopped:
        raise OperateError(f"{node.node.name} in lab {running.name} is already stopped")
    _stop(running, node, operated, live)


def _start_stopped(running: RunningLab, node: NodeContext[Any], operated: Operated, live: LiveChange) -> None:
    if node.node.name not in operated.stopped:
        raise OperateError(f"{node.node.name} in lab {running.name} is running already")
    _start(running, node, operated, live)
    if node.kind.role is Role.MACHINE:  # it booted afresh: nothing of what its commands did is left
        live.add(*running.startup_commands_of(node))


def _restart(running: RunningLab, node: NodeContext[Any], operated: Operated, live: LiveChange) -> None:
    """Like a container's restart: what ran in the node ends (a server a startup command left running too), then
    the node starts afresh and its startup commands run again. A VM is powered off and boots again."""
    if node.node.name not in operated.stopped:
        _stop(running, node, operated, live)
    netns = _namespace_of(node)
    if netns is not None:
        live.add(o.SignalProcesses(owner=node.subject, netns=netns, signal=o.Signal.KILL))
    for container in running.container_of(node):  # its first process ended with the rest: the image starts afresh
        live.add(container.inverse(), container)
    _start(running, node, operated, live)
    live.add(*running.startup_commands_of(node))


def _stop(running: RunningLab, node: NodeContext[Any], operated: Operated, live: LiveChange) -> None:
    operated.stopped.add(node.node.name)
    live.recorded_first = _as_now(operated)
    for start in reversed(running.processes_of(node)):
        stop = start.inverse()
        if stop is not None:  # a resumed domain has nothing to undo: destroying it is its StartDomain's inverse
            live.add(stop)
    netns = _namespace_of(node)
    if netns is not None:
        live.add(o.SignalProcesses(owner=node.subject, netns=netns, signal=o.Signal.STOP))
    live.steps += running.carrier_of(running.ends_of_node(node), operated)


def _start(running: RunningLab, node: NodeContext[Any], operated: Operated, live: LiveChange) -> None:
    operated.stopped.discard(node.node.name)
    live.steps += running.carrier_of(running.ends_of_node(node), operated)
    netns = _namespace_of(node)
    if netns is not None:
        live.add(o.SignalProcesses(owner=node.subject, netns=netns, signal=o.Signal.CONT))
    live.add(*running.files_of(node))
    live.add(*running.processes_of(node))  # in plan order: zebra, the routing daemons, their configuration
    live.recorded_last = _as_now(operated)


def _namespace_of(node: NodeContext[Any]) -> str | None:
    return node.kind.netns(node) if node.kind.role is Role.NAMESPACE else None


def set_link_state(lab: str | LabRecord, a: str, b: str, up: bool, store: StateStore | None = None, *,
                   explain: bool = False, labs: ResolvedLabs | None = None) -> str:
    """Take the link between `a` and `b` (node names, each with an optional ":PORT") up or down; `labs` as for
    `running_lab`."""
    with running_lab(lab, store, labs=labs) as running:
        link = running.link(a, b)
        name = running.link_name(link)
        operated = running.record.operated()
        if (link.id not in operated.down) == up:
            raise OperateError(f"link {name} in lab {running.name} is {'up' if up else 'down'} already")
        (operated.down.discard if up else operated.down.add)(link.id)
        live = LiveChange(running.carrier_of(running.ends_of_link(link), operated), recorded_first=operated)
        if explain:
            return running.explain(live, f"taking link {name} {'up' if up else 'down'}")
        running.run(live)
        stopped = sorted({end.node.name for end in running.ends_of_link(link)} & operated.stopped)
        pull = running.describe_pull(link)
    if up:
        note = f" ({', '.join(stopped)} stopped: its end stays down)" if stopped else ""
        return f"link {name} in lab {running.name} is up{note}"
    return f"link {name} in lab {running.name} is down: {pull}"


def set_link_impairment(lab: str | LabRecord, a: str, b: str, change: ImpairmentChange, *,
                        store: StateStore | None = None, explain: bool = False, labs: ResolvedLabs | None = None
                        ) -> str:
    """Change a running link's rate, delay, jitter or loss, live, as `change` says (a value it does not give keeps
    the link's; 0 removes it).

    The ops are those a deploy of the lab with the new impairment makes for the link, on the devices its deploy
    recorded for it (vtopo.host.state.shaped_links_of): the lab is not compiled again. The lab as recorded takes the new
    impairment, and they replace the link's impairment in the journal, so status, `deploy --update` and the designer
    see the link as if it had been deployed so; `labs` (the agent's) keep the lab so changed, resolved already.
    """
    record = _record_of(lab, store)
    with record.locked():
        deployed = record.read()
        topology = topology_of(deployed)
        link = link_between(topology, a, b)
        owner = f"link {topology.describe_link(link)}"
        shaped = shaped_links_of(deployed).get(link.id)  # None: none of its ends is on this site
        if shaped is not None and shaped.medium == SWITCH_PORT:
            raise OperateError(f"{owner} in lab {topology.name} is the switch's own port, which has no queue on the "
                               "switch's side to shape: set the impairment in the lab and deploy it again (`vtopo "
                               "deploy --update`), which makes the link a veth pair")
        impairment = change.applied_to(link.impairment)
        problem = impairment_problem(impairment, facts_of(deployed))
        if problem is not None:
            raise OperateError(f"{owner} in lab {topology.name}: {problem}")
        live = LiveChange()
        live.add(*(impair_device(owner, device, netns, impairment) for device, netns in
                   (shaped.devices if shaped is not None else ())))
        if explain:
            return explained(live, f"setting {owner} to {describe_impairment(impairment)}", topology.name,
                             record.prefix)
        known = labs.of(record) if labs is not None else None  # the lab before the change, which the change derives
        with _applying(record) as applier:
            run_change(record, applier, live)
        impaired = [step.op for step in live.steps] if impairment.active else []  # none is what a deploy makes
        record.replace_in_journal(lambda op: isinstance(op, o.SetImpairment) and op.owner == owner, impaired)
        link.impairment = impairment
        record.write_topology(topology)
        if labs is not None and known is not None:
            labs.keep(record, known.with_impairment(link.id, impairment, impaired))
    return f"{owner} in lab {topology.name}: {describe_impairment(impairment)}"


def describe_impairment(impairment: Impairment) -> str:
    parts = [f"{label} {value:g}{unit}" for label, value, unit in (
        ("rate", impairment.rate_mbit, " Mbit/s"), ("delay", impairment.delay_ms, " ms"),
        ("jitter", impairment.jitter_ms, " ms"), ("loss", impairment.loss_pct, "%")) if value]
    return ", ".join(parts) if parts else "no impairment"
