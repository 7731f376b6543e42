"""A hostile lab is refused before any op is applied: `vtopo deploy` exits 2 and the host is as it was."""
from __future__ import annotations

from pathlib import Path

import pytest

from golden import GOLDEN
from residue import snapshot
from vtopo.cli.main import main
from vtopo.model import io
from vtopo.model.topology import Node, Topology

pytestmark = pytest.mark.privileged

HOSTILE = sorted((GOLDEN / "hostile").glob("*.vtopo"))


def test_every_hostile_lab_is_refused_before_anything_is_applied(capsys, tmp_path: Path) -> None:
    huge = Topology(name="hungry")
    for index in range(3):
        huge.add_node(Node(id=f"v{index}", name=f"v{index}", kind="vm", settings={"memory_mb": 1_048_576}))
    io.save(huge, tmp_path / "hungry.vtopo")
    before = snapshot()
    for lab in [*HOSTILE, tmp_path / "hungry.vtopo"]:
        assert main(["deploy", str(lab)]) == 2, lab.name
        said = capsys.readouterr().err
        assert "error: " in said and "Traceback" not in said, said
        assert snapshot() - before == {}, f"{lab.name} changed the host"
    assert "MiB of memory together and this host has" in said
