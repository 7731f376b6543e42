"""The model, kinds, compiler, host and measurement layers never import Qt."""
from __future__ import annotations

import subprocess
import sys

HEADLESS = ["vtopo.model.io", "vtopo.kinds.registry", "vtopo.compile.compiler", "vtopo.lab", "vtopo.cli",
            "vtopo.host", "vtopo.measure", "vtopo.capture"]


def test_headless_layers_do_not_import_qt():
    code = ("import sys, importlib\n"
            f"for name in {HEADLESS!r}: importlib.import_module(name)\n"
            "from vtopo.lab import registry\n"
            "registry()\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6'))\n"
            "print(','.join(bad))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""
