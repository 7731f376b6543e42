"""Link labels never overlap, can be hidden, and exports can be made for print."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from tests.gui.helpers import dark_theme
from vtopo.gui.canvas import export
from vtopo.gui.canvas.items import LinkItem
from vtopo.gui.main_window import MainWindow
from vtopo.model.topology import Impairment, Interface


def label_rects(item: LinkItem) -> list:
    return [rect for rect in (*item._label_rects, item._middle_rect) if not rect.isEmpty()]


def short_impaired_link(window: MainWindow, dx: float, dy: float) -> LinkItem:
    editor = window.editor
    a = editor.place_node("router", QPointF(0, 0))
    b = editor.place_node("router", QPointF(dx, dy))
    assert a and b
    link = editor.connect_nodes(a.id, b.id)
    assert link
    editor.update_link(link.id, a=Interface(addresses=["10.0.12.1/30"]), b=Interface(addresses=["10.0.12.2/30"]),
                       impairment=Impairment(delay_ms=20, rate_mbit=100))
    return editor.scene.links[link.id]


def test_labels_of_a_short_link_do_not_overlap(make_window: Callable[..., MainWindow]) -> None:
    window = make_window(None)
    for dx, dy in ((150, 0), (110, 0), (0, 140), (120, 90), (-100, 100)):
        item = short_impaired_link(window, dx, dy)
        rects = label_rects(item)
        assert len(rects) == 3
        for i, first in enumerate(rects):
            for second in rects[i + 1:]:
                assert not first.intersects(second), (dx, dy, first, second)


def test_interface_labels_can_be_hidden_and_the_choice_is_kept(make_window: Callable[..., MainWindow]) -> None:
    window = make_window(None)
    item = short_impaired_link(window, 200, 0)
    window.menu_actions.interface_labels.trigger()
    assert [rect.isEmpty() for rect in item._label_rects] == [True, True]
    assert not item._middle_rect.isEmpty()  # the impairment still shows
    assert window.settings.value("view/interface-labels", type=bool) is False


def test_print_export_is_white_without_grid(make_window: Callable[..., MainWindow], tmp_path: Path,
                                            qtbot: QtBot) -> None:
    window = make_window()
    with dark_theme(window, qtbot):
        assert export.export_png(window.editor.scene, tmp_path / "screen.png")
        assert export.export_png(window.editor.scene, tmp_path / "print.png", for_print=True)
    screen, paper = QImage(str(tmp_path / "screen.png")), QImage(str(tmp_path / "print.png"))
    assert QColor(screen.pixel(2, 2)).lightness() < 80
    # white everywhere a grid line would be: no pixel of the margin differs from white
    assert {paper.pixel(x, y) for x in range(0, 60) for y in range(0, 60)} == {QColor("white").rgb()}
