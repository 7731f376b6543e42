"""runc's state directory is vtopo's to make: runc makes what it lacks 0700, /run/vtopo included, and a lab's root
(the member outside, in no group of /run/vtopo's) then cannot reach its node's bundle there (runc's bind of the
node's root is refused). Asking runc about vtopo's containers before any lab ran must make nothing."""
from __future__ import annotations

from pathlib import Path

from vtopo.host import oci_engine

NO_LABS = "-"  # a prefix no lab has: a lab's prefix is letters and digits


def test_asking_runc_before_any_lab_makes_no_directory(tmp_path: Path) -> None:
    run_root = tmp_path / "run-vtopo"
    assert not oci_engine.containers(str(run_root))
    assert not oci_engine.leftovers(str(run_root), prefixes=(NO_LABS,))  # cgroups are the host's: the privileged
    # tests, run beside this one, have image nodes of their own labs there
    assert not run_root.exists()
