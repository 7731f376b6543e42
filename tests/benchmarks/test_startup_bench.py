"""How long the CLI takes to answer, against the interpreter starting and doing nothing. Prints; asserts no times.

Targets (issue 40): `vtopo --help`, `vtopo kinds` and `vtopo status` with no lab deployed at most 100 ms, `vtopo
validate` of a teaching lab at most 150 ms. Validating against this host's facts runs programs too (FRR's `vtysh -C`
dry run of each router's configuration, side by side): the time while any of them runs is measured inside the command,
and vtopo's own part is the rest.

VTOPO_BENCH_BEFORE=DIR measures the vtopo of another checkout too (DIR's app/ and plugins/, its .pyc files written
by a first run as this one's are), each command beside this one's in the same alternating run: a change's before and
after.
"""
from __future__ import annotations

import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from agent_process import Agent
from benchmarks.report import machine_facts, write_fragment
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

TRIALS = 15
TEACHING_LABS = [TOPOLOGIES / "l2-vs-l3.vtopo", TOPOLOGIES / "ospf-ring.vtopo"]
AT_ONCE, VALIDATE_AT_ONCE = 0.100, 0.150  # seconds: the targets
VTOPO = [sys.executable, "-m", "vtopo"]
BEFORE = os.environ.get("VTOPO_BENCH_BEFORE", "")
IMPORT_TIME = re.compile(r"^import time:\s+(\d+) \|\s+\d+ \| *(\S+)$", re.MULTILINE)  # self, cumulative (µs), module

# `python -c PROGRAMS_TIMED ARGS...` is `vtopo ARGS...` that also writes to $VTOPO_BENCH_PROGRAMS how long the programs
# it ran took, and which they were: the time while any of them ran, since vtopo runs a lab's dry runs side by side.
PROGRAMS_TIMED = """
import json, os, runpy, subprocess, sys, threading, time
spans, programs, run, lock = [], [], subprocess.run, threading.Lock()
def timed(argv, *args, **kwargs):
    started = time.perf_counter()
    try:
        return run(argv, *args, **kwargs)
    finally:
        words = list(argv)
        with lock:
            spans.append((started, time.perf_counter()))
            programs.append(os.path.basename(words[words.index("--") + 1] if words[0] == "setpriv" else words[0]))
def covered(spans):
    total, reached = 0.0, float("-inf")
    for start, end in sorted(spans):
        total += max(0.0, end - max(start, reached))
        reached = max(reached, end)
    return total
subprocess.run = timed
sys.argv[0] = "vtopo"
try:
    runpy.run_module("vtopo", run_name="__main__", alter_sys=True)
finally:
    with open(os.environ["VTOPO_BENCH_PROGRAMS"], "w") as out:
        json.dump({"seconds": covered(spans), "programs": programs}, out)
"""


@dataclass
class Command:
    name: str
    argv: list[str]
    target: float | None = None
    environment: dict[str, str] = field(default_factory=dict)
    times_programs: bool = False
    before: bool = False  # the vtopo of the checkout VTOPO_BENCH_BEFORE names
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # user and system time, its programs' with it
    in_programs: list[float] = field(default_factory=list)
    programs: list[str] = field(default_factory=list)

    def imports(self, base: dict[str, str], programs_file: Path) -> tuple[float, list[tuple[float, str]]]:
        """One run under `python -X importtime`: the seconds its imports took in all, and each module's own."""
        env = {**base, **self.environment, "VTOPO_BENCH_PROGRAMS": str(programs_file)}
        result = subprocess.run([self.argv[0], "-X", "importtime", *self.argv[1:]], env=env, check=True,
                                capture_output=True, text=True)
        own = [(int(match[1]) / 1e6, match[2]) for match in IMPORT_TIME.finditer(result.stderr)]
        return sum(seconds for seconds, _ in own), sorted(own, reverse=True)

    def run(self, base: dict[str, str], programs_file: Path) -> None:
        env = {**base, **self.environment, "VTOPO_BENCH_PROGRAMS": str(programs_file)}
        started, used = time.perf_counter(), _children_cpu()
        subprocess.run(self.argv, env=env, check=True, capture_output=True)
        self.wall.append(time.perf_counter() - started)
        self.cpu.append(_children_cpu() - used)
        if self.times_programs:
            said = json.loads(programs_file.read_text())
            self.in_programs.append(said["seconds"])
            self.programs = said["programs"]


def _children_cpu() -> float:
    """The processor time the children this process waited for have used, in seconds."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def validated(lab: Path, offline: bool) -> Command:
    nodes = len(io.load(lab).nodes)
    if offline:
        return Command(f"`vtopo validate --offline` of {lab.name} ({nodes} nodes)",
                       [*VTOPO, "validate", "--offline", str(lab)], VALIDATE_AT_ONCE)
    return Command(f"`vtopo validate` of {lab.name}, with this host's facts",
                   [sys.executable, "-c", PROGRAMS_TIMED, "validate", str(lab)], VALIDATE_AT_ONCE, times_programs=True)


def each_beside_its_before(commands: list[Command]) -> list[Command]:
    """`commands`, each of vtopo's followed by the same run by the vtopo of VTOPO_BENCH_BEFORE, when it names one."""
    if not BEFORE:
        return commands
    code = {"PYTHONPATH": f"{BEFORE}/app:{BEFORE}/plugins"}
    return [twin for command in commands for twin in ([command] if not command.target else [
        command, replace(command, name=f"&nbsp;&nbsp;the same, before ({Path(BEFORE).name})", before=True,
                         environment={**command.environment, **code}, wall=[], cpu=[], in_programs=[],
                         programs=[])])]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def test_cli_start_up_against_an_empty_interpreter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    facts = machine_facts()
    monkeypatch.setenv("VTOPO_STATE_DIR", str(tmp_path / "state"))  # no lab deployed, whatever the machine runs
    base = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}  # as installed
    with Agent.running() as agent:
        commands = each_beside_its_before([
            Command("`python -c pass`, in vtopo's venv", [sys.executable, "-c", "pass"]),
            Command("`python3 -c pass`, the system's interpreter, without the venv's editable install of vtopo",
                    [os.path.realpath(sys.executable), "-c", "pass"]),
            Command("`python -c 'import importlib.metadata'`: the reader of entry points, with which vtopo finds its "
                    "kinds and NetworkX its backends", [sys.executable, "-c", "import importlib.metadata"]),
            Command("`python -c 'import networkx'`: the compiler's graph engine, which `vtopo validate` loads",
                    [sys.executable, "-c", "import networkx"]),
            Command("`vtopo --help`", [*VTOPO, "--help"], AT_ONCE),
            Command("`vtopo kinds`", [*VTOPO, "kinds"], AT_ONCE),
            Command("`vtopo status`, no lab deployed, through the agent", [*VTOPO, "status"], AT_ONCE,
                    {"VTOPO_AGENT_SOCKET": str(agent.socket)}),
            Command("`vtopo status`, no lab deployed, as root with no agent listening (it runs one in its process)",
                    [*VTOPO, "status"], AT_ONCE, {"VTOPO_AGENT_SOCKET": str(tmp_path / "none.sock")}),
            *(validated(lab, offline) for offline in (True, False) for lab in TEACHING_LABS),
        ])
        programs_file = tmp_path / "programs.json"
        for command in commands:  # compile the .pyc files once, as an installed vtopo has them
            command.run(base, programs_file)
            command.wall.clear()
            command.cpu.clear()
            command.in_programs.clear()
        for _ in range(TRIALS):  # alternate, so that every command sees the same machine
            for command in commands:
                command.run(base, programs_file)
        imports = {command.name: command.imports(base, programs_file) for command in commands
                   if command.target and not command.before}
    baseline = statistics.median(commands[1].wall)  # the bare interpreter: the baseline
    lines = ["### Starting the command line", "", facts, "",
             f"Wall clock of each command, median of {TRIALS} runs, alternating, warm (a first run of each compiled "
             f"its .pyc files, as an installed vtopo has them). Targets: {ms(AT_ONCE)} to answer, "
             f"{ms(VALIDATE_AT_ONCE)} to validate a teaching lab. Validating against this host's facts also runs "
             "programs (FRR's `vtysh -C` dry run of each router's configuration, as nobody, one per core at a time): "
             "the time while any of them runs is measured inside the command, and vtopo's own part is the rest."
             + (f" Beneath each of vtopo's commands, the same run by the vtopo of {Path(BEFORE).name}, in the same "
                "alternating run." if BEFORE else "")
             + " Beside it, the processor time it used (user and system, its programs' with it): on a busy machine "
             "the wall clock waits for the processors, which this time does not.", "",
             "| command | median | against a bare `python3 -c pass` | target | processor time |", "|---|---|---|---|---|"]
    print(f"\nCLI start-up (median of {TRIALS}), against a bare `python3 -c pass` ({ms(baseline)}):")

    def row(name: str, median: float, target: float | None = None, against: bool = True, cpu: float | None = None
            ) -> None:
        ratio, goal = f"{median / baseline:.1f}x" if against else "", f"at most {ms(target)}" if target else ""
        used = ms(cpu) if cpu is not None else ""
        lines.append(f"| {name} | {ms(median)} | {ratio} | {goal} | {used} |")
        print(f"  {name.replace('&nbsp;', ' '):<100} {median * 1000:6.0f} ms  {ratio:>6}  {goal:<16} {used}")

    for command in commands:
        row(command.name, statistics.median(command.wall), command.target, cpu=statistics.median(command.cpu))
        if command.times_programs:
            ran = ", ".join(f"{command.programs.count(name)} × {name}" for name in sorted(set(command.programs)))
            row(f"&nbsp;&nbsp;of which the programs it runs ({ran or 'none'})", statistics.median(command.in_programs),
                against=False)
            row("&nbsp;&nbsp;of which vtopo's own part",
                statistics.median(w - p for w, p in zip(command.wall, command.in_programs)), command.target)
    lines += ["", "What each command imports, from one run under `python -X importtime` (which adds its own overhead): "
              "the time of all its imports, and the modules that took longest themselves.", ""]
    print("\nImports (one run under python -X importtime):")
    for name, (total, own) in imports.items():
        heaviest = ", ".join(f"{module} {ms(seconds)}" for seconds, module in own[:4])
        lines.append(f"- {name}: {ms(total)} in {len(own)} modules; {heaviest}")
        print(f"  {name:<100} {total * 1000:6.0f} ms  {len(own):4} modules; {heaviest}")
    write_fragment("startup", "\n".join(lines))
