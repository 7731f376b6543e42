"""A deploy that fails says in its first line what failed, where and what to do; -v adds the details. A lab that
needs what the host lacks fails in preflight, before anything is applied."""
from __future__ import annotations

import pytest

from residue import snapshot
from test_validate_host import CONSENT, lab_needing_what_the_host_lacks
from vtopo.cli.main import main
from vtopo.host.applier import Applier, OpFailed
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged


def fail_call(monkeypatch, number: int) -> None:  # type: ignore[no-untyped-def]
    """The host refuses apply call `number` (a mock only injects the fault; everything else runs for real)."""
    calls = [0]
    real = Applier.apply

    def apply(self, op):  # type: ignore[no-untyped-def]
        calls[0] += 1
        if calls[0] == number:
            raise OpFailed(op, "File exists\nkernel said more here")
        real(self, op)

    monkeypatch.setattr(Applier, "apply", apply)


@pytest.mark.parametrize("verbose", [False, True])
def test_a_failed_deploy_is_one_line_and_details_come_with_v(monkeypatch, capsys, verbose):
    before = snapshot()
    fail_call(monkeypatch, 6)
    assert main(["deploy", str(TOPOLOGIES / "bridge-veth.vtopo"), *(["-v"] if verbose else [])]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[0].startswith("error: ") and ": could not " in lines[0] and "File exists" in lines[0]
    assert lines[0].endswith("(the host is as it was; fix that and deploy again)")
    assert "kernel said more here" not in lines[0]
    if verbose:
        assert "kernel said more here" in "\n".join(lines[1:]) and "rolled back" in "\n".join(lines[1:])
    else:
        assert lines[1:] == ["(vtopo deploy -v shows the details)"]
    assert snapshot() - before == {}


def test_a_missing_lower_device_fails_before_anything_is_applied(tmp_path, capsys):
    before = snapshot()
    assert main(["deploy", *CONSENT, str(lab_needing_what_the_host_lacks(tmp_path))]) == 2
    assert "the lower device vtnolower0 does not exist on this host" in capsys.readouterr().err
    assert snapshot() - before == {}
