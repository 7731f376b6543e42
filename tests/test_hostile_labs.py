"""Hostile lab files, one per rule of the security model: each is refused with its golden message (exit 2), by
`validate` and by `plan --explain` alike, with no traceback. Deploying them is tested in tests/labs/."""
from __future__ import annotations

import pytest

from golden import GOLDEN, assert_golden
from vtopo.cli.main import main
from vtopo.model.untrusted_json import MAX_BYTES

HOSTILE = sorted((GOLDEN / "hostile").glob("*.vtopo"))


@pytest.mark.parametrize("lab_file", HOSTILE, ids=[p.stem for p in HOSTILE])
def test_hostile_lab_is_refused(lab_file, capsys):
    code = main(["validate", "--offline", str(lab_file)])
    output = capsys.readouterr().err.replace(str(lab_file), lab_file.name)
    assert "Traceback" not in output
    assert_golden(lab_file.with_suffix(".txt"), output)
    assert code == 2
    assert main(["plan", "--offline", "--explain", str(lab_file)]) == 2
    explained = capsys.readouterr()
    assert explained.out == "" and explained.err


def test_files_too_large_or_not_regular_are_refused(tmp_path, capsys):
    big = tmp_path / "big.vtopo"
    big.write_text('{"format": "vtopo", "notes": "' + "x" * MAX_BYTES + '"}')
    assert main(["validate", str(big)]) == 2
    assert "larger than 4 MiB" in capsys.readouterr().err
    assert main(["validate", "/dev/zero"]) == 2
    assert "/dev/zero is not a regular file" in capsys.readouterr().err
