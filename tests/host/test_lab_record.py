"""vtopo.host.state.LabRecord: what a reader learns of a deployed lab's record as it is written again."""
from __future__ import annotations

from pathlib import Path

import pytest

from vtopo.host.state import LabRecord


def test_a_records_name_is_what_its_latest_writing_says(tmp_path: Path) -> None:
    record = LabRecord(tmp_path / "lr")
    record.directory.mkdir()
    record.write({"name": "first"})
    assert record.name == "first"
    record.write({"name": "second"})  # a lab of another name under the same prefix, after the first's destroy
    assert record.name == "second"
    (record.directory / "lab.json").unlink()
    with pytest.raises(FileNotFoundError):
        assert record.name
