"""Properties of the compiler over random valid labs: they compile, names fit, and teardown mirrors the plan."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vtopo.lab_terms import MAX_INTERFACE_NAME
from vtopo.compile.compiler import compile_plan
from vtopo.compile.resolve import resolve
from vtopo.lab import registry
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology
from vtopo.ops import CreateBridge, CreateMacvlan, CreateMacvtap, CreateNamespace, CreateTap, CreateVeth

SWITCH_KINDS = ("bridge", "ovs")
LEAF_KINDS = ("container", "router")


@st.composite
def labs(draw: st.DrawFn) -> Topology:
    topology = Topology(name=draw(st.from_regex(r"[a-z]{1,12}", fullmatch=True)))
    subnet = iter(range(1, 10_000))

    def add(kind: str, name: str, **settings: object) -> str:
        topology.add_node(Node(id=f"id-{name}", name=name, kind=kind, settings=dict(settings)))
        return f"id-{name}"

    def connect(a: str, a_port: str, b: str, b_port: str, a_ns: bool, b_ns: bool) -> None:
        net = next(subnet)
        prefix = f"10.{net // 250}.{net % 250}"
        a_if = Interface(addresses=[f"{prefix}.1/24"] if a_ns else [])
        b_if = Interface(addresses=[f"{prefix}.2/24"] if b_ns else [])
        topology.add_link(Link(id=f"l{net}", a=Endpoint(a, a_port, a_if), b=Endpoint(b, b_port, b_if)))

    switches = [add(draw(st.sampled_from(SWITCH_KINDS)), f"s{i}") for i in range(draw(st.integers(0, 3)))]
    ports = {s: 1 for s in switches}
    joined = len(switches) > 1 and draw(st.booleans())  # s0 and s1 linked: one broadcast domain
    domain_of = {s: switches[0] if joined and s == switches[1] else s for s in switches}
    hosts = {s: iter(range(1, 250)) for s in switches}
    wires = {s: next(subnet) for s in switches}  # every interface on a domain is in its subnet, as routers need
    leaf_count = draw(st.integers(1, 8))
    for i in range(leaf_count):
        kind = draw(st.sampled_from(LEAF_KINDS))
        leaf = add(kind, f"{kind[0]}{i}", **({"router_id": f"10.255.0.{i + 1}"} if kind == "router" else {}))
        used: set[str] = set()
        for port in range(draw(st.integers(0, 3))):
            free = [s for s in switches if kind != "router" or domain_of[s] not in used]  # one port per domain
            if free and draw(st.booleans()):
                switch = draw(st.sampled_from(free))
                domain = domain_of[switch]
                used.add(domain)
                address = f"10.{wires[domain] // 250}.{wires[domain] % 250}.{next(hosts[domain])}/24"
                topology.add_link(Link(id=f"l{next(subnet)}", a=Endpoint(leaf, f"eth{port}", Interface(
                    addresses=[address])), b=Endpoint(switch, f"p{ports[switch]}")))
                ports[switch] += 1
    if draw(st.booleans()):
        segment = add("macvlan", "mv", mode=draw(st.sampled_from(("bridge", "private", "vepa"))))
        for i in range(draw(st.integers(1, 4))):
            child = add("container", f"m{i}")
            connect(child, "eth0", segment, f"c{i + 1}", True, False)
    if draw(st.booleans()):
        segment = add("macvtap", "mt")
        for i in range(draw(st.integers(1, 3))):
            vm = add("vm", f"v{i}")
            connect(vm, "nic0", segment, f"c{i + 1}", False, False)
    if joined:
        connect(switches[0], f"p{ports[switches[0]]}", switches[1], f"p{ports[switches[1]]}", False, False)
    return topology


def created_devices(plan) -> list[tuple[str | None, str]]:  # type: ignore[no-untyped-def]
    devices = []
    for op in plan.ops:
        if isinstance(op, CreateVeth):
            devices += [(op.netns, op.name), (op.peer_netns, op.peer)]
        elif isinstance(op, CreateMacvlan):
            devices.append((op.netns, op.name))
        elif isinstance(op, (CreateBridge, CreateMacvtap, CreateTap)):
            devices.append((None, op.name))
    return devices


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labs())
def test_random_valid_labs_compile_with_unique_short_names(topology):
    plan = compile_plan(resolve(topology, registry()))
    devices = created_devices(plan)
    assert len(devices) == len(set(devices)), "two devices with one name in one namespace"
    assert all(len(name) <= MAX_INTERFACE_NAME for _, name in devices)
    namespaces = [op.name for op in plan.ops if isinstance(op, CreateNamespace)]
    assert len(namespaces) == len(set(namespaces))
    assert plan.dumps() == compile_plan(resolve(topology, registry())).dumps()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labs())
def test_teardown_is_the_inverses_in_reverse_order(topology):
    plan = compile_plan(resolve(topology, registry()))
    inverses = [(step.index, op.inverse()) for step in plan.steps if (op := step.op).inverse() is not None]
    assert plan.teardown() == [inverse for _, inverse in reversed(inverses)]
    steps = {step.index: step for step in plan.steps}
    for step in plan.steps:
        assert all(dep < step.index for dep in step.deps), "an op runs before something it needs"
        if step.op.inverse() is None:
            assert _undone_by_an_ancestor(step.index, steps), f"nothing undoes {step.op.summary()}"


def _undone_by_an_ancestor(index: int, steps: dict) -> bool:  # type: ignore[type-arg]
    pending, seen = list(steps[index].deps), set()
    while pending:
        dep = pending.pop()
        if dep in seen:
            continue
        seen.add(dep)
        if steps[dep].op.inverse() is not None:
            return True
        pending.extend(steps[dep].deps)
    return False
