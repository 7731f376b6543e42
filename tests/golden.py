"""Golden-file comparison. Set VTOPO_UPDATE_GOLDEN=1 to rewrite the expected files after a deliberate change."""
from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"


def assert_golden(path: Path, actual: str) -> None:
    if os.environ.get("VTOPO_UPDATE_GOLDEN") == "1" or not path.exists():
        path.write_text(actual)
        if os.environ.get("VTOPO_UPDATE_GOLDEN") != "1":
            raise AssertionError(f"{path} did not exist; it was written now. Review it and commit it.")
    expected = path.read_text()
    assert actual == expected, f"{path.name} differs from its golden file; run with VTOPO_UPDATE_GOLDEN=1 if intended"
