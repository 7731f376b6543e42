"""A member's capture through the agent: iperf3 TCP between two of their containers while they capture with a filter
on c1's port (in a namespace of the lab's) and on the whole bridge (the host's), against no capture, in the same run.
Trials alternate so that drift hits each alike. Prints figures; asserts no times."""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from security.members import MembersLabs, deployed_by_each, tiny_lab

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

LAB = "capture-bench"
TRIALS = 3
SECONDS = 3
TARGETS = ("c1:eth0", "br")


def _lab(directory: Path) -> list[tuple[str, Path]]:
    return [("a", tiny_lab(directory, LAB, address="10.9.1.1/24", nodes=2))]  # c1 and c2 (10.9.1.2) on bridge br


@pytest.fixture(scope="module")
def labs() -> Iterator[MembersLabs]:
    with deployed_by_each(_lab) as made:
        yield made


def _iperf(labs: MembersLabs) -> float:
    member = labs.users["a"].pw_name
    server = labs.agent.spawn(member, "exec", LAB, "c2", "--", "iperf3", "-s", "-1")
    time.sleep(0.5)
    try:
        client = labs.agent.vtopo(member, "exec", LAB, "c1", "--", "iperf3", "-c", "10.9.1.2", "-t", str(SECONDS),
                                  "-J")
        assert client.returncode == 0, client.stdout + client.stderr
    finally:
        server.communicate(timeout=30)
    return float(json.loads(client.stdout)["end"]["sum_received"]["bits_per_second"])


def _captured_iperf(labs: MembersLabs, target: str) -> float:
    """iperf3 while the member captures TCP on `target`, its pcap stream read and dropped."""
    runner = ["runuser", "-u", labs.users["a"].pw_name, "--", sys.executable, "-m", "vtopo"]
    capture = subprocess.Popen([*runner, "capture", LAB, target, "--pcap", "-f", "tcp"], env=labs.agent.env,
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd="/")
    try:
        assert capture.stderr is not None
        first = capture.stderr.readline().decode()
        assert "listening on" in first, first
        return _iperf(labs)
    finally:
        capture.communicate(timeout=30)  # its stdin ends: `--pcap` stops then, as it does when ssh's ends


def test_member_capture_overhead(labs: MembersLabs) -> None:
    plain: list[float] = []
    captured: dict[str, list[float]] = {target: [] for target in TARGETS}
    for _ in range(TRIALS):
        plain.append(_iperf(labs))
        for target in TARGETS:
            captured[target].append(_captured_iperf(labs, target))
    base = statistics.median(plain)
    print(f"\niperf3 TCP between a member's containers, {TRIALS} trials of {SECONDS} s each, median receiver rate:")
    print(f"  without capture (baseline): {base / 1e9:.2f} Gb/s")
    for target, rates in captured.items():
        rate = statistics.median(rates)
        print(f"  capturing tcp on {target:8} {rate / 1e9:.2f} Gb/s  ratio {rate / base:.2f}  "
              f"({', '.join(f'{r / 1e9:.2f}' for r in rates)})")
    assert all(rates for rates in captured.values())
