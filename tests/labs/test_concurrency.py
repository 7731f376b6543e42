"""Two vtopo processes at once: shared host services (Open vSwitch) start once, stay up while any lab needs them,
and stop after the last lab. One round of each interleaving; the benchmarks repeat them as a soak
(tests/benchmarks/test_concurrency_bench.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from ovs_rounds import deploy_both_then_destroy_both, deploy_one_while_the_other_goes, two_ovs_labs
from residue import snapshot

pytestmark = pytest.mark.privileged


def test_concurrent_deploys_start_ovs_once_and_the_last_destroy_stops_it(tmp_path: Path, ovs_stopped: None) -> None:
    deploy_both_then_destroy_both(two_ovs_labs(tmp_path), snapshot(), 0, at_once=True)


def test_a_lab_deployed_while_the_last_other_lab_is_destroyed_keeps_its_ovs(tmp_path: Path, ovs_stopped: None) -> None:
    deploy_one_while_the_other_goes(two_ovs_labs(tmp_path), snapshot(), 0, at_once=True)
