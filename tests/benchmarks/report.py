"""Where benchmarks leave their figures: markdown fragments in docs/bench/, spliced into the README.

`make bench` runs the benchmarks, each writes its fragment, and scripts/bench_readme.py puts them into the
README's performance section, so that no figure there is typed by hand.
"""
from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path

BENCH_DOCS = Path(__file__).parents[2] / "docs" / "bench"


def write_fragment(name: str, markdown: str) -> Path:
    """Save one benchmark's section of the README as docs/bench/NAME.md."""
    BENCH_DOCS.mkdir(parents=True, exist_ok=True)
    path = BENCH_DOCS / f"{name}.md"
    path.write_text(markdown.rstrip() + "\n")
    return path


def _first_line(argv: list[str]) -> str:
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except OSError:
        return "not installed"
    return (result.stdout or result.stderr).strip().splitlines()[0] if result.returncode == 0 else "not installed"


def machine_facts() -> str:
    """The machine a benchmark ran on, in one markdown line, with the load at the moment it is called."""
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.machine())
    memory_kib = next(int(line.split()[1]) for line in Path("/proc/meminfo").read_text().splitlines()
                      if line.startswith("MemTotal:"))
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return (f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} cores of {cpu}, "
            f"{memory_kib / 2**20:.0f} GiB, Linux {platform.release()}, Python {platform.python_version()}, "
            f"{_first_line(['ip', '-V'])}; load average {load} when it started.")
