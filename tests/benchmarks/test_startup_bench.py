"""How long the CLI takes to answer, against the interpreter starting and doing nothing. Prints; asserts no times."""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

import pytest

from benchmarks.report import machine_facts, write_fragment
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.benchmark

TRIALS = 10
TEACHING_LAB = TOPOLOGIES / "l2-vs-l3.vtopo"
COMMANDS = {
    "`python -c pass`": ["-c", "pass"],
    "`python -c 'import networkx'`, the compiler's graph engine alone": ["-c", "import networkx"],
    "`vtopo --help`": ["-m", "vtopo", "--help"],
    "`vtopo kinds`": ["-m", "vtopo", "kinds"],
    f"`vtopo validate --offline` of the {len(io.load(TEACHING_LAB).nodes)}-node teaching lab":
        ["-m", "vtopo", "validate", "--offline", str(TEACHING_LAB)],
    "`vtopo validate` of the same, with this host's facts": ["-m", "vtopo", "validate", str(TEACHING_LAB)],
}


def test_cli_start_up_against_an_empty_interpreter():
    facts = machine_facts()
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}  # as installed
    runs: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for argv in COMMANDS.values():  # compile the .pyc files once, as an installed vtopo has them
        subprocess.run([sys.executable, *argv], env=env, check=True, capture_output=True)
    for _ in range(TRIALS):  # alternate, so that every command sees the same machine
        for name, argv in COMMANDS.items():
            started = time.perf_counter()
            subprocess.run([sys.executable, *argv], env=env, check=True, capture_output=True)
            runs[name].append(time.perf_counter() - started)
    baseline = statistics.median(runs["`python -c pass`"])
    lines = ["### Starting the command line", "", facts, "",
             f"Wall clock of each command, median of {TRIALS} runs, alternating; target 0.3 s. `validate` compiles "
             "the lab, so it loads NetworkX, which imports all of itself at once.", "",
             "| command | median | against `python -c pass` |", "|---|---|---|"]
    print(f"\nCLI start-up (median of {TRIALS}):")
    for name, times in runs.items():
        median = statistics.median(times)
        lines.append(f"| {name} | {median * 1000:.0f} ms | {median / baseline:.1f}x |")
        print(f"  {name:<66} {median * 1000:6.0f} ms   {median / baseline:5.1f}x python -c pass   (target <= 300 ms)")
    write_fragment("startup", "\n".join(lines))
