"""The soak of tests/labs/test_concurrency.py: its two interleavings of two vtopo processes on two Open vSwitch labs,
round after round (a race between OVS's start and stop shows in some rounds only), each round checked as in the
suite. Prints the time of a round with the two processes at once, against the same commands one after another in
the same run (rounds alternate, so drift hits both alike), and the ratio."""
from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Callable

import pytest

from benchmarks.report import machine_facts
from ovs_rounds import deploy_both_then_destroy_both, deploy_one_while_the_other_goes, two_ovs_labs
from residue import Residue, snapshot

pytestmark = [pytest.mark.benchmark, pytest.mark.privileged]

ROUNDS = 10
Round = Callable[[tuple[Path, Path], Residue, int, bool], None]


@pytest.mark.parametrize("one_round", [deploy_both_then_destroy_both, deploy_one_while_the_other_goes],
                         ids=["both-then-both", "one-while-the-other-goes"])
def test_rounds_of_two_vtopo_processes_keep_ovs_right(one_round: Round, tmp_path: Path, ovs_stopped: None) -> None:
    labs, before = two_ovs_labs(tmp_path), snapshot()
    seconds: dict[bool, list[float]] = {True: [], False: []}
    for round_ in range(ROUNDS):
        for at_once in (True, False):
            start = time.monotonic()
            one_round(labs, before, round_, at_once)
            seconds[at_once].append(time.monotonic() - start)
    together, apart = statistics.mean(seconds[True]), statistics.mean(seconds[False])
    print(f"\n{machine_facts()}\n{one_round.__name__}, {ROUNDS} rounds: {together:.2f} s a round with both vtopo "
          f"processes at once, {apart:.2f} s one after another (baseline), ratio {together / apart:.2f}")
