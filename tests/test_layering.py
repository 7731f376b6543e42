"""The model, kinds, compiler, host and measurement layers never import Qt, and the designer's modules live in folders
named for what they hold."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import vtopo.gui

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


def test_the_designer_keeps_few_modules_at_its_top_level():
    """Folders say what is inside: a module of the designer lives in the folder named for what it holds (actions,
    canvas, panels, style...), and gui/ itself keeps the window, the entry point and what every folder shares."""
    top = sorted(path.name for path in Path(vtopo.gui.__file__).parent.glob("*.py"))
    assert len(top) <= 8, top
