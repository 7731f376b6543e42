"""Deploy and destroy speed against the floor and Mininet, and OSPF convergence. Prints; asserts no times.

Run with `make bench`. The floor is the same kernel work per container, made and taken down in one process of its own
as directly as Python can ask for it (floor_star.py): network, mount and UTS namespaces, each kept by a bind mount,
the container's mounts, its veth pair made on the bridge and up in one request, its inner end brought up and addressed
in its own namespace. Mininet 2.3 (Debian's package, Linux bridge, no controller) builds the
same star; it runs in the same session as vtopo, each size alternating between the tools. After the runs of each size,
one more in-process deploy and destroy is profiled: the time of each operation, summed by its type.

VTOPO_DEPLOY_BENCH_COUNTS=400 runs only that size (the fragment for the README then holds only its figures).
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent_process import Agent
from benchmarks import floor_star
from benchmarks.report import BENCH_DOCS, machine_facts, write_fragment
from vtopo.deployed import DeployedLab
from vtopo.host.deployer import Deployer
from vtopo.model import io
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology
from vtopo.ops import Op
from vtopo.reports import Progress

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

COUNTS = tuple(int(n) for n in os.environ.get("VTOPO_DEPLOY_BENCH_COUNTS", "10,100,400,1000").split(","))
TRIALS = {10: 3, 100: 3, 400: 3, 1000: 1}
PROFILED = 400  # the size whose profile goes into the README
PLOT = BENCH_DOCS / "deploy-time.png"
SETTLE_SECONDS = 30.0
QUIET_SECONDS = 0.5
MININET_STAR = """
import json, sys, time
from mininet.net import Mininet
from mininet.nodelib import LinuxBridge
from mininet.topo import SingleSwitchTopo
started = time.perf_counter()
net = Mininet(topo=SingleSwitchTopo(int(sys.argv[1])), switch=LinuxBridge, controller=None)
try:
    net.start()
    built = time.perf_counter() - started
finally:
    stopping = time.perf_counter()
    net.stop()
print(json.dumps([built, time.perf_counter() - stopping]))
"""

Timing = tuple[float, float]  # seconds to build, seconds to take down


def star(count: int) -> Topology:
    topology = Topology(name=f"bench{count}", prefix="vb")
    topology.add_node(Node(id="br", name="br", kind="bridge", settings={"forward_delay": 0.0}))
    for i in range(count):
        topology.add_node(Node(id=f"c{i}", name=f"c{i}", kind="container"))
        topology.add_link(Link(id=f"l{i}", a=Endpoint(f"c{i}", "eth0", Interface(addresses=[address(i)])),
                               b=Endpoint("br", f"p{i + 1}")))
    return topology


def address(i: int) -> str:
    return f"10.{i // 250}.{i % 250}.1/8"


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def tearing_down_namespaces() -> bool:
    """Whether a kernel worker is tearing down deleted namespaces now (it is named kworker/...+netns meanwhile)."""
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().startswith("kworker") and "+netns" in comm.read_text():
                return True
        except OSError:  # gone meanwhile
            continue
    return False


def settle() -> None:
    """Wait until the kernel has stopped tearing down the namespaces of the run before: it does so after `netns del`
    has returned, under the lock every link change takes, so the next tool timed would pay for it."""
    deadline = time.monotonic() + SETTLE_SECONDS
    quiet_since = time.monotonic()
    while time.monotonic() < deadline and time.monotonic() - quiet_since < QUIET_SECONDS:
        if tearing_down_namespaces():
            quiet_since = time.monotonic()
        time.sleep(0.05)


def vtopo_in_process(topology: Topology) -> Timing:
    deployer = Deployer()
    return timed(lambda: deployer.deploy(topology)), timed(lambda: deployer.destroy(topology.name))


def vtopo_cli(lab_file: Path, name: str, environment: dict[str, str]) -> Timing:
    """`vtopo deploy` and `vtopo destroy` as commands; with an agent's environment, the agent does the work, as it
    does for root once `make run` has started one."""
    env = {key: value for key, value in environment.items() if key != "PYTHONDONTWRITEBYTECODE"}  # as installed
    vtopo = [sys.executable, "-m", "vtopo"]
    return (timed(lambda: subprocess.run([*vtopo, "deploy", str(lab_file)], env=env, check=True, capture_output=True)),
            timed(lambda: subprocess.run([*vtopo, "destroy", name], env=env, check=True, capture_output=True)))


@dataclass
class Profile:
    """Where one in-process deploy and destroy of N containers spent its time: before the first operation (compile,
    preflight, claiming the lab), and each operation summed by its type (the last one's with what follows it: waiting
    for lingering veth ends, the lab's record)."""

    count: int
    phases: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    ops: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    def table(self) -> list[str]:
        total = sum(self.phases.values()) + sum(sum(times) for times in self.ops.values())
        rows = [(name, 1, seconds_) for name, seconds_ in self.phases.items()]
        rows += [(name, len(times), sum(times)) for name, times in self.ops.items()]
        lines = ["| part | times | total | per container | share |", "|---|---|---|---|---|"]
        for name, times, spent in sorted(rows, key=lambda row: -row[2]):
            lines.append(f"| {name} | {times} | {seconds(spent)} | {spent / self.count * 1e6:.0f} us | "
                         f"{spent / total:.0%} |")
        return lines


def profiled(topology: Topology) -> Profile:
    """Deploy and destroy `topology` in this process, timing each operation from the progress that announces it to
    the next; the journal says which operation each announcement was (the destroy's, their inverses newest first)."""
    deployer = Deployer()
    profile = Profile(len(topology.nodes) - 1)
    marks: list[tuple[float, Progress]] = []

    def mark(progress: Progress) -> None:
        marks.append((time.perf_counter(), progress))

    def share_out(started: float, ended: float, stage: str, ops: list[Op], verb: str) -> None:
        stamps = [stamp for stamp, progress in marks if progress.stage == stage]
        assert len(stamps) == len(ops), f"{len(stamps)} progress reports for {len(ops)} operations"
        profile.phases[f"{verb}: before the first operation"] += stamps[0] - started
        for op, begun, over in zip(ops, stamps, [*stamps[1:], ended]):
            profile.ops[f"{verb}: {type(op).__name__}"].append(over - begun)
        marks.clear()

    started = time.perf_counter()
    deployer.deploy(topology, mark)
    deployed = time.perf_counter()
    record = deployer.store.named(topology.name)
    assert record is not None
    journal = record.journal()
    share_out(started, deployed, "apply", journal, "deploy")
    deployer.destroy(topology.name, mark)
    inverses = [inverse for op in reversed(journal) if (inverse := op.inverse()) is not None]
    share_out(deployed, time.perf_counter(), "destroy", inverses, "destroy")
    return profile


def floor(count: int) -> Timing:
    """The same kernel work as directly as Python asks for it, in one process of its own (see floor_star.py), which
    times itself as Mininet's run does."""
    result = subprocess.run([sys.executable, floor_star.__file__, str(count)], capture_output=True, text=True,
                            check=True)
    build, stop = json.loads(result.stdout.splitlines()[-1])
    return build, stop


def mininet(count: int) -> Timing:
    result = subprocess.run(["/usr/bin/python3", "-c", MININET_STAR, str(count)], capture_output=True, text=True,
                            check=True)
    build, stop = json.loads(result.stdout.splitlines()[-1])
    return build, stop


def mininet_version() -> str | None:
    if shutil.which("mn") is None:
        return None
    result = subprocess.run(["mn", "--version"], capture_output=True, text=True)
    return f"Mininet {(result.stdout or result.stderr).strip()}"


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s" if value >= 0.1 else f"{value * 1000:.0f} ms"


def ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None else f"{a / b:.1f}x"


def plot(medians: dict[str, dict[int, Timing]], path: Path) -> None:
    """Deploy time against the number of containers, log-log, one line per tool: a PNG for the README."""
    from PySide6.QtCharts import QChart, QChartView, QLineSeries, QLogValueAxis
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QPainter

    chart = QChart()
    chart.setTitle("Deploying N containers on one Linux bridge (median seconds, log-log)")
    x_axis, y_axis = QLogValueAxis(), QLogValueAxis()
    x_axis.setTitleText("containers")
    x_axis.setLabelFormat("%g")
    y_axis.setTitleText("seconds")
    y_axis.setLabelFormat("%g")
    chart.addAxis(x_axis, Qt.AlignmentFlag.AlignBottom)
    chart.addAxis(y_axis, Qt.AlignmentFlag.AlignLeft)
    deploys = [deploy for by_count in medians.values() for deploy, _ in by_count.values()]
    x_axis.setRange(min(COUNTS) / 1.5, max(COUNTS) * 1.5)  # a log axis does not widen itself to its points
    y_axis.setRange(min(deploys) / 1.5, max(deploys) * 1.5)
    for tool, by_count in medians.items():
        if not by_count:
            continue
        series = QLineSeries()
        series.setName(tool)
        series.setPointsVisible(True)
        for count, (deploy, _) in sorted(by_count.items()):
            series.append(count, deploy)
        chart.addSeries(series)
        series.attachAxis(x_axis)
        series.attachAxis(y_axis)
    view = QChartView(chart)
    view.setRenderHint(QPainter.RenderHint.Antialiasing)
    view.resize(900, 560)
    path.parent.mkdir(parents=True, exist_ok=True)
    view.grab().save(str(path))


def test_containers_on_a_bridge_against_the_floor_and_mininet(qapp, tmp_path):  # type: ignore[no-untyped-def]
    with Agent.running() as agent:
        containers_on_a_bridge(tmp_path, agent)


def containers_on_a_bridge(tmp_path: Path, agent: Agent) -> None:
    facts = machine_facts()
    mininet_release = mininet_version()
    runners: dict[str, Callable[[int, Path, str], Timing]] = {
        "vtopo in-process": lambda count, _, __: vtopo_in_process(star(count)),
        "vtopo CLI": lambda _, lab_file, name: vtopo_cli(lab_file, name, dict(os.environ)),
        "vtopo CLI, agent": lambda _, lab_file, name: vtopo_cli(lab_file, name, agent.env),
        "floor": lambda count, _, __: floor(count),
    }
    if mininet_release is not None:
        runners["Mininet"] = lambda count, _, __: mininet(count)
    medians: dict[str, dict[int, Timing]] = {tool: {} for tool in runners}
    profiles: dict[int, Profile] = {}
    for count in COUNTS:
        topology = star(count)
        lab_file = tmp_path / f"{topology.name}.vtopo"
        io.save(topology, lab_file)
        runs: dict[str, list[Timing]] = {tool: [] for tool in runners}
        for _ in range(TRIALS[count]):  # alternate, so that every tool sees the same machine
            for tool, run in runners.items():
                settle()
                runs[tool].append(run(count, lab_file, topology.name))
        for tool, timings in runs.items():
            medians[tool][count] = (statistics.median(t[0] for t in timings), statistics.median(t[1] for t in timings))
        print(f"\n{count} containers on one bridge (median of {TRIALS[count]}):")
        for tool in runners:
            deploy, destroy = medians[tool][count]
            print(f"  {tool:<17} deploy {seconds(deploy):>8}   destroy {seconds(destroy):>8}")
        bottom = medians["floor"][count]
        peer = medians.get("Mininet", {}).get(count, (None, None))
        for tool in ("vtopo in-process", "vtopo CLI", "vtopo CLI, agent"):
            ours = medians[tool][count]
            print(f"  {tool}: deploy / floor {ratio(ours[0], bottom[0])}, destroy / floor {ratio(ours[1], bottom[1])} "
                  f"(targets <= 1.5x); Mininet / deploy {ratio(peer[0], ours[0])} (target >= 8x), Mininet / destroy "
                  f"{ratio(peer[1], ours[1])} (target >= 10x)")
        print(f"  Mininet / floor: deploy {ratio(peer[0], bottom[0])}, destroy {ratio(peer[1], bottom[1])} (where one "
              "is below 8x or 10x, that target asks for less time than the floor's)")
        settle()
        profiles[count] = profiled(topology)
        print(f"  where one in-process deploy and destroy spent its time:\n    " +
              "\n    ".join(profiles[count].table()))
    plot(medians, PLOT)
    write_fragment("deploy", deploy_markdown(medians, facts, mininet_release,
                                             profiles.get(PROFILED, profiles[COUNTS[-1]])))


def deploy_markdown(medians: dict[str, dict[int, Timing]], facts: str, mininet_release: str | None,
                    profile: Profile) -> str:
    def figure(tool: str, count: int, phase: int) -> float | None:
        return medians.get(tool, {}).get(count, (None, None))[phase]

    lines = ["### Deploying and destroying containers", "", facts, "",
             "N containers, each linked to one Linux bridge with an address; median of "
             + ", ".join(f"{TRIALS[c]} at {c}" for c in COUNTS) + " runs, the tools alternating, each run started "
             "when no kernel worker was tearing down namespaces deleted before it (waiting at most "
             f"{SETTLE_SECONDS:.0f} s). {floor_star.CAPTION} Mininet is "
             + (f"Debian's {mininet_release} (Linux bridge, no controller)." if mininet_release else
                "not installed on this machine, so it has no figures."), "",
             "`vtopo deploy` runs the deploy in its own process, as root does with no agent; through the agent "
             "(started from this checkout, as `make run` starts one) the command only sends the lab and follows the "
             "progress.",
             "",
             "| N | vtopo in-process | `vtopo deploy` | through the agent | floor | floor ratio (own process, agent) | "
             "Mininet build | Mininet / agent | Mininet / floor |",
             "|---|---|---|---|---|---|---|---|---|"]
    for count in COUNTS:
        own, agent = figure("vtopo CLI", count, 0), figure("vtopo CLI, agent", count, 0)
        bottom, peer = figure("floor", count, 0), figure("Mininet", count, 0)
        lines.append(f"| {count} | {seconds(figure('vtopo in-process', count, 0))} | {seconds(own)} | "
                     f"{seconds(agent)} | {seconds(bottom)} | {ratio(own, bottom)}, {ratio(agent, bottom)} | "
                     f"{seconds(peer)} | {ratio(peer, agent)} | {ratio(peer, bottom)} |")
    lines += ["", "| N | vtopo in-process destroy | `vtopo destroy` | through the agent | floor | Mininet stop | "
              "Mininet / agent | Mininet / floor |",
              "|---|---|---|---|---|---|---|---|"]
    for count in COUNTS:
        agent, bottom, peer = (figure(tool, count, 1) for tool in ("vtopo CLI, agent", "floor", "Mininet"))
        lines.append(f"| {count} | {seconds(figure('vtopo in-process', count, 1))} | "
                     f"{seconds(figure('vtopo CLI', count, 1))} | {seconds(agent)} | {seconds(bottom)} | "
                     f"{seconds(peer)} | {ratio(peer, agent)} | {ratio(peer, bottom)} |")
    lines += ["", "Targets: through the agent, at least 8x Mininet's build and 10x its stop, and at most 1.5x the floor. "
              "Where Mininet / floor is below 8x (or 10x), the first target asks for less time than the floor's."]
    lines += ["", f"Where one more in-process deploy and destroy of {profile.count} containers spent its time, each "
              "operation timed from the progress report that announces it to the next:", "", *profile.table()]
    lines += ["", f"![Deploy time against N](docs/bench/{PLOT.name})"]
    return "\n".join(lines)


def ring(routers: int) -> Topology:
    topology = Topology(name="ospfring", prefix="vr")
    for i in range(1, routers + 1):
        topology.add_node(Node(id=f"r{i}", name=f"r{i}", kind="router", settings={"passive": ["eth0"]}))
        topology.add_node(Node(id=f"h{i}", name=f"h{i}", kind="container", settings={"default_route": f"10.{i}.0.1"}))
        topology.add_link(Link(id=f"lan{i}", a=Endpoint(f"h{i}", "eth0", Interface(addresses=[f"10.{i}.0.10/24"])),
                               b=Endpoint(f"r{i}", "eth0", Interface(addresses=[f"10.{i}.0.1/24"]))))
    for i in range(1, routers + 1):
        j = i % routers + 1
        topology.add_link(Link(id=f"ring{i}", a=Endpoint(f"r{i}", "eth1", Interface(addresses=[f"10.99.{i}.1/30"])),
                               b=Endpoint(f"r{j}", "eth2", Interface(addresses=[f"10.99.{i}.2/30"]))))
    return topology


def test_six_router_ospf_ring_time_to_full_reachability():
    routers = 6
    topology = ring(routers)
    deployer = Deployer()
    started = time.perf_counter()
    deployer.deploy(topology)
    deployed_at = time.perf_counter() - started
    try:
        lab = DeployedLab.find(topology.name)
        pending = {(f"h{i}", f"h{j}") for i in range(1, routers + 1) for j in range(1, routers + 1) if i != j}
        while pending and time.perf_counter() - started < 60:
            for source, target in sorted(pending):
                address = lab.target_address(source, target)[0]
                argv = lab.command_in(source, ["ping", "-c", "1", "-W", "0.2", address])
                if subprocess.run(argv, capture_output=True).returncode == 0:
                    pending.discard((source, target))
        reachable_at = time.perf_counter() - started
    finally:
        deployer.destroy(topology.name)
    assert not pending, f"never reached: {sorted(pending)}"
    print(f"\n6-router OSPF ring: deployed in {deployed_at:.2f} s, every host reaches every other host "
          f"{reachable_at:.2f} s after deploy started (target <= 10 s)")
