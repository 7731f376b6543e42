"""Driving the canvas like a user: mouse presses, moves and releases at scene positions."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QTimer
from PySide6.QtGui import (QAction, QDragEnterEvent, QDragMoveEvent, QDropEvent, QHelpEvent, QMouseEvent,
                           QWheelEvent)
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (QAbstractItemView, QApplication, QLineEdit, QMenu, QMessageBox, QTableView,
                               QToolTip, QWidget)
from pytestqt.qtbot import QtBot

from vtopo.gui.canvas.scene import TopologyScene
from vtopo.gui.canvas.view import KIND_MIME_TYPE, CanvasView
from vtopo.gui.main_window import MainWindow
from vtopo.gui.panels.setting_editors import FieldEditor


def links_settled(scene: TopologyScene) -> bool:
    """Every link follows its nodes in Qt's index, none drawn stretched after a drag, and has its labels where they
    show (zoomed in)."""
    return not any(link.stretched or (scene.detailed and not link.placed) for link in scene.links.values())


def view_point(view: CanvasView, scene_point: QPointF) -> QPoint:
    return view.mapFromScene(scene_point)


def tooltip_at(window: MainWindow, at: QPointF) -> str:
    """The tooltip the canvas shows for the mouse resting at a scene position."""
    viewport = window.view.viewport()
    local = view_point(window.view, at)
    QApplication.sendEvent(viewport, QHelpEvent(QHelpEvent.Type.ToolTip, local, viewport.mapToGlobal(local)))
    return QToolTip.text()


def send(view: CanvasView, kind: QMouseEvent.Type, at: QPoint, button: Qt.MouseButton,
         buttons: Qt.MouseButton, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    event = QMouseEvent(kind, QPointF(at), QPointF(view.viewport().mapToGlobal(at)), button, buttons, modifiers)
    QApplication.sendEvent(view.viewport(), event)


def drag(view: CanvasView, start: QPointF, end: QPointF, button: Qt.MouseButton = Qt.MouseButton.LeftButton,
         modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier, steps: int = 8) -> None:
    """Press at a scene point, move there in steps, release: a real drag as the view sees it."""
    a, b = view_point(view, start), view_point(view, end)
    send(view, QMouseEvent.Type.MouseButtonPress, a, button, button, modifiers)
    for i in range(1, steps + 1):
        at = a + (b - a) * (i / steps)
        send(view, QMouseEvent.Type.MouseMove, at, Qt.MouseButton.NoButton, button, modifiers)
    send(view, QMouseEvent.Type.MouseButtonRelease, b, button, Qt.MouseButton.NoButton, modifiers)


def wheel(view: CanvasView, notches: int) -> None:
    """Turn the mouse wheel over the middle of the canvas: positive notches zoom in, negative ones out."""
    at = QPointF(view.viewport().rect().center())
    event = QWheelEvent(at, QPointF(view.viewport().mapToGlobal(at)), QPoint(), QPoint(0, 120 * notches),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(view.viewport(), event)


def click(view: CanvasView, at: QPointF, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    point = view_point(view, at)
    left = Qt.MouseButton.LeftButton
    send(view, QMouseEvent.Type.MouseButtonPress, point, left, left, modifiers)
    send(view, QMouseEvent.Type.MouseButtonRelease, point, left, Qt.MouseButton.NoButton, modifiers)


def inspected_setting(qtbot: QtBot, window: MainWindow, node_id: str, setting: str) -> FieldEditor:
    """The inspector's editor of a node's setting, once laid out as a user sees it: a form just built may leave its
    widgets without a size for a turn or two, and a click then lands on nothing."""
    form = window.inspector.node_form

    def laid_out() -> bool:
        editor = form.fields.get(setting)
        if form.node_id != node_id or editor is None or not editor.widget.isVisible():
            return False
        return all(not child.isVisible() or not child.size().isEmpty()
                   for child in [editor.widget, *editor.widget.findChildren(QWidget)])

    qtbot.waitUntil(laid_out)
    return form.fields[setting]


def focus_canvas(qtbot: QtBot, window: MainWindow) -> None:
    """The window active and its canvas focused, as after a click on it: where the keyboard's shortcuts go."""
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=3000)
    window.view.setFocus()
    qtbot.waitUntil(window.view.hasFocus, timeout=3000)


def right_click(view: CanvasView, at: QPointF) -> None:
    point = view_point(view, at)
    right = Qt.MouseButton.RightButton
    send(view, QMouseEvent.Type.MouseButtonPress, point, right, right)
    send(view, QMouseEvent.Type.MouseButtonRelease, point, right, Qt.MouseButton.NoButton)


def double_click(view: CanvasView, at: QPointF) -> None:
    point = view_point(view, at)
    left = Qt.MouseButton.LeftButton
    send(view, QMouseEvent.Type.MouseButtonPress, point, left, left)
    send(view, QMouseEvent.Type.MouseButtonRelease, point, left, Qt.MouseButton.NoButton)
    send(view, QMouseEvent.Type.MouseButtonDblClick, point, left, left)
    send(view, QMouseEvent.Type.MouseButtonRelease, point, left, Qt.MouseButton.NoButton)


W = TypeVar("W", bound=QWidget)


def when_open(kind: type[W], act: Callable[[W], None], *, popup: bool = False) -> None:
    """Once a `kind` is the active modal widget (or popup), which runs its own event loop, `act` on it."""
    def look() -> None:
        widget = QApplication.activePopupWidget() if popup else QApplication.activeModalWidget()
        if not isinstance(widget, kind):
            QTimer.singleShot(20, look)
            return
        try:
            act(widget)
        except BaseException:
            widget.close()  # its event loop ends: the test fails with the error instead of waiting for ever
            raise

    QTimer.singleShot(0, look)


def when_menu_opens(pick: Callable[[QMenu], None]) -> list[list[str]]:
    """Once a popup menu is open, hand it to `pick` (which chooses an entry, or closes it). Returns the list
    the menu's entry texts are put in, to look at afterwards."""
    seen: list[list[str]] = []

    def opened(menu: QMenu) -> None:
        seen.append([action.text() for action in menu.actions() if not action.isSeparator()])
        pick(menu)

    when_open(QMenu, opened, popup=True)
    return seen


def choose(text: str) -> Callable[[QMenu], None]:
    """Pick the entry with this text as a user would: make it current, press Return."""
    def pick(menu: QMenu) -> None:
        action = next(action for action in menu.actions() if action.text() == text)
        assert action.isEnabled(), f"{text} is disabled"
        menu.setActiveAction(action)
        QTest.keyClick(menu, Qt.Key.Key_Return)
    return pick


def dismiss(menu: QMenu) -> None:
    QTest.keyClick(menu, Qt.Key.Key_Escape)


def answer_next_dialog(button_text: str) -> list[str]:
    """Click a button of the next message box once it is open, as a user would. Returns the list its text is put in."""
    texts: list[str] = []

    def answer(box: QMessageBox) -> None:
        texts.append(f"{box.text()}\n{box.informativeText()}")
        button = next(button for button in box.buttons() if button.text() == button_text)
        QTest.mouseClick(button, Qt.MouseButton.LeftButton)

    when_open(QMessageBox, answer)
    return texts


def deploy_with_f5(qtbot: QtBot, window: MainWindow) -> None:
    window.activateWindow()  # a closed dialog had the focus; F5 is a shortcut of the active window
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, Qt.Key.Key_F5)


def deploy_or_destroy(window: MainWindow, qtbot: QtBot, deploy: bool) -> None:
    """Deploy (or destroy, answering its question) from the menu once the window is idle, and wait until done."""
    action = window.menu_actions.deploy if deploy else window.menu_actions.destroy
    qtbot.waitUntil(lambda: not window.deploy.busy and action.isEnabled(), timeout=30_000)  # a status read may run
    with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=120_000):
        if not deploy:
            answer_next_dialog("Destroy")
        action.trigger()


@contextmanager
def dark_theme(window: MainWindow, qtbot: QtBot) -> Iterator[None]:
    """The dark theme while the block runs, then the application's palette as it was."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    original = app.palette()
    try:
        window.menu_actions.themes["dark"].trigger()
        qtbot.waitUntil(lambda: window.editor.scene.colors.base.lightness() < 80)
        yield
    finally:
        app.setPalette(original)


def click_menu_entry(qtbot: QtBot, window: MainWindow, menu_text: str, action: QAction) -> None:
    """Open a menu of the menu bar with the mouse, then click one of its entries."""
    entry = next(entry for entry in window.menuBar().actions() if entry.text() == menu_text)
    menu = entry.menu()
    assert isinstance(menu, QMenu)
    qtbot.mouseClick(window.menuBar(), Qt.MouseButton.LeftButton, pos=window.menuBar().actionGeometry(entry).center())
    qtbot.waitUntil(menu.isVisible)
    qtbot.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(action).center())


def drop_kind(window: MainWindow, kind: str, scene_point: QPointF) -> None:
    """What a drag from the palette delivers to the canvas: enter, move, drop, with the kind's MIME data."""
    view = window.view
    at = QPointF(view.mapFromScene(scene_point))
    data = QMimeData()
    data.setData(KIND_MIME_TYPE, kind.encode())
    actions, left, none = Qt.DropAction.CopyAction, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    QApplication.sendEvent(view.viewport(), QDragEnterEvent(at.toPoint(), actions, data, left, none))
    QApplication.sendEvent(view.viewport(), QDragMoveEvent(at.toPoint(), actions, data, left, none))
    QApplication.sendEvent(view.viewport(), QDropEvent(at, actions, data, left, none))


def edit_cell(qtbot: QtBot, table: QTableView, row: int, column: int, text: str) -> None:
    """Double-click a table's cell, replace what it holds by `text`, press Enter (the delegate commits on the next
    turn of the event loop)."""
    index = table.model().index(row, column)
    table.scrollTo(index)
    cell = table.visualRect(index).center()
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=cell)
    qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=cell)
    qtbot.waitUntil(lambda: table.state() == QAbstractItemView.State.EditingState)
    field = next(edit for edit in table.viewport().findChildren(QLineEdit) if edit.isVisible())
    field.selectAll()
    qtbot.keyClicks(field, text)
    qtbot.keyClick(field, Qt.Key.Key_Return)


def cell_text(table: QTableView, row: int, column: int) -> str:
    return str(table.model().index(row, column).data())
