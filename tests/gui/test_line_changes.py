"""The Explain dock changes a long script by its changed lines: whatever the edit, the document then holds the new
text exactly, and a rename in a 2,000-node lab's script of 60,000 lines is a few small changes."""
from __future__ import annotations

import random
from typing import Any, Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument

from tests.gui.conftest import wait_analysis
from vtopo.gui.main_window import MainWindow
from vtopo.gui.document.line_diff import line_changes
from vtopo.gui.panels.line_changes import apply_changes


def test_the_changed_lines_turn_any_text_into_any_other(qapp: Any) -> None:
    rng = random.Random(27)
    for _ in range(2000):
        old = [rng.choice("abcde") for _ in range(rng.randint(0, 12))]
        new = list(old)
        for _ in range(rng.randint(0, 4)):
            where = rng.randint(0, len(new))
            edit = rng.choice(("insert", "delete", "replace"))
            if edit == "insert":
                new.insert(where, rng.choice("abxyz"))
            elif new:
                if edit == "delete":
                    del new[min(where, len(new) - 1)]
                else:
                    new[min(where, len(new) - 1)] = rng.choice("xyz")
        before, after = "\n".join(old), "\n".join(new)
        document = QTextDocument()
        document.setPlainText(before)
        apply_changes(document, line_changes(before, after))
        assert document.toPlainText() == after, (before, after)


def test_a_rename_changes_a_few_lines_of_a_long_script() -> None:
    script = "\n".join(f"ip link add bench-br{i} type bridge  # node br{i}" for i in range(60_000))
    renamed = script.replace("bench-br17 ", "bench-core ").replace("node br17\n", "node core\n")
    changes = line_changes(script, renamed)
    assert [(change.start, change.end) for change in changes] == [(17, 18)]
    assert changes[0].lines == ("ip link add bench-core type bridge  # node core",)


def test_the_explain_dock_follows_a_rename_typed_on_the_canvas(make_window: Callable[..., MainWindow],
                                                                qtbot: Any, monkeypatch: Any) -> None:
    from vtopo.gui.panels import explain

    monkeypatch.setattr(explain, "SET_AT_ONCE_CHARS", 100)  # the small lab's script changes by lines too
    window = make_window()
    window.explain_dock.raise_()
    text = window.explain.text
    qtbot.waitUntil(lambda: "# ---- node h1" in text.toPlainText())
    window.editor.scene.select_ids(["h1"])
    qtbot.keyClick(window.view, Qt.Key.Key_F2)
    editor = window.focusWidget()
    editor.selectAll()
    qtbot.keyClicks(editor, "web")
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    wait_analysis(qtbot, window)
    qtbot.waitUntil(lambda: text.toPlainText() == window.analyzer.latest.explanation)
    assert "# ---- node web" in text.toPlainText() and "# ---- node h1" not in text.toPlainText()
