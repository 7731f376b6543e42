"""The Edit menu: undo and redo, the clipboard, notes, alignment and layout of the selection."""
from __future__ import annotations

from functools import partial

from PySide6.QtCore import QPointF
from PySide6.QtGui import QCursor

from vtopo.gui.actions.designer import Designer
from vtopo.gui.actions.spec import SEPARATOR, Action, Key, Menu, Scope, Submenu
from vtopo.gui.document.editor import ALIGN_MODES
from vtopo.layout import LAYOUTS


def paste(designer: Designer, at: QPointF | None = None) -> None:
    """At the cursor when it is over the canvas (or at the given point), always in view."""
    view = designer.parts.view
    cursor = view.viewport().mapFromGlobal(QCursor.pos())
    if at is None and view.viewport().rect().contains(cursor):
        at = view.mapToScene(cursor)
    designer.parts.editor.paste(at, view.mapToScene(view.viewport().rect()).boundingRect())


def select_all(designer: Designer) -> None:
    for item in designer.parts.editor.scene.items():
        if item.flags() & item.GraphicsItemFlag.ItemIsSelectable:
            item.setSelected(True)


def annotate(designer: Designer, shape: str, at: QPointF | None = None) -> None:
    view = designer.parts.view
    where = at if at is not None else view.mapToScene(view.viewport().rect().center())
    annotation = designer.parts.editor.add_annotation(shape, where)
    designer.parts.editor.scene.select_ids([annotation.id])


def auto_layout(designer: Designer, style: str) -> None:
    designer.parts.editor.auto_layout(style)
    designer.parts.view.fit_to_view()


def rename_selected(designer: Designer) -> None:
    if node_id := designer.selected_node():
        designer.parts.view.start_rename(node_id)


def align(designer: Designer, mode: str) -> None:
    designer.parts.editor.align(mode)


ALIGN = tuple(Action(f"edit.align.{mode}", text, partial(align, mode=mode),
                     keys=("Ctrl+G",) if mode == "grid" else (), enabled_when=lambda c: c.movable)
              for mode, text in ALIGN_MODES.items())
AUTO_LAYOUT = tuple(Action(f"edit.layout.{style}", text, partial(auto_layout, style=style),
                           keys=("Ctrl+Shift+L",) if style == "layered" else ())
                    for style, text in LAYOUTS.items())
SELECT_ALL = Action("edit.select_all", "Select &all", select_all, keys=(Key.SelectAll,), scope=Scope.CANVAS)

MENU = Menu("&Edit", (
    Action("edit.undo", "&Undo", made_by=lambda d: d.parts.editor.undo_stack.createUndoAction(d.window, "&Undo"),
           keys=(Key.Undo,)),
    Action("edit.redo", "&Redo", made_by=lambda d: d.parts.editor.undo_stack.createRedoAction(d.window, "&Redo"),
           keys=(Key.Redo, "Ctrl+Shift+Z", "Ctrl+Y")),
    SEPARATOR,
    Action("edit.cut", "Cu&t", lambda d: d.parts.editor.cut_selection(), keys=(Key.Cut,), scope=Scope.CANVAS,
           enabled_when=lambda c: c.movable),
    Action("edit.copy", "&Copy", lambda d: d.parts.editor.copy_selection(), keys=(Key.Copy,), scope=Scope.CANVAS,
           enabled_when=lambda c: c.movable),
    Action("edit.paste", "&Paste", paste, keys=(Key.Paste,), scope=Scope.CANVAS),
    # not Ctrl+D: a Linux desktop binds it to Delete (QKeySequence.Delete), and Qt fires neither of the two
    Action("edit.duplicate", "&Duplicate", lambda d: d.parts.editor.duplicate_selection(), keys=("Ctrl+Shift+D",),
           scope=Scope.CANVAS, enabled_when=lambda c: c.movable),
    Action("edit.delete", "De&lete", lambda d: d.parts.editor.delete_selection(), keys=(Key.Delete, "Backspace"),
           scope=Scope.CANVAS, enabled_when=lambda c: c.selected),
    SELECT_ALL,
    Action("edit.rename", "&Rename", rename_selected, keys=("F2",), scope=Scope.CANVAS,
           enabled_when=lambda c: bool(c.node)),
    SEPARATOR,
    Action("edit.add_note", "Add &note", lambda d: annotate(d, "note"), keys=("Ctrl+Shift+N",)),
    Action("edit.add_rect", "Add &rectangle", lambda d: annotate(d, "rect"), keys=("Ctrl+Shift+R",)),
    SEPARATOR,
    Submenu("edit.align", "&Align", ALIGN),
    *AUTO_LAYOUT,
), elsewhere=(
    Action("edit.properties", "P&roperties", lambda d: d.parts.show_inspector()),
))
