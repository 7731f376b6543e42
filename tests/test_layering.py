"""The model, kinds, compiler, host and measurement layers never import Qt, the designer's modules live in folders
named for what they hold, and only the host layer enters or makes a namespace."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import vtopo.gui
import vtopo_kinds

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


NAMESPACE_CALLS = {"setns", "unshare"}


def namespace_calls(path: Path) -> list[str]:
    """Where a module calls setns or unshare, whoever's (os's, ctypes' libc, the host's syscalls)."""
    return [f"{path}:{node.lineno}" for node in ast.walk(ast.parse(path.read_text(), str(path)))
            if isinstance(node, ast.Call) and NAMESPACE_CALLS & {getattr(node.func, "attr", None),
                                                                  getattr(node.func, "id", None)}]


def test_only_the_host_layer_enters_or_makes_a_namespace():
    """The import contract kernel-through-the-host (setup.cfg) keeps pyroute2, libvirt and the host's own netlink,
    process and namespace modules to the host layer; os.setns and os.unshare need no import, so calls are looked for."""
    host = Path(vtopo.gui.__file__).parents[1] / "host"
    modules = [path for root in (host.parent, Path(vtopo_kinds.__file__).parent) for path in root.rglob("*.py")
               if host not in path.parents]
    assert len(modules) > 100
    assert [call for path in modules for call in namespace_calls(path)] == []
    assert namespace_calls(host / "netns.py"), "the host layer's own calls are no longer found: update the search"
