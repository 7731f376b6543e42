"""The View menu: how the canvas draws the lab, zoom, presentation mode, the theme and the panels."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QMenu

from vtopo.gui.actions.designer import Designer
from vtopo.gui.actions.spec import SEPARATOR, Action, Key, Menu, Scope, Submenu
from vtopo.gui.style.theme import THEMES, apply_theme

SNAP_KEY = "view/snap-to-grid"
LABELS_KEY = "view/interface-labels"
THEME_KEY = "view/theme"
PRESENTATION_UI = 1.35  # presentation mode: menus and panels this much larger


def snap(designer: Designer, checked: bool) -> None:
    designer.parts.editor.scene.snap_to_grid = checked
    designer.parts.settings.setValue(SNAP_KEY, checked)


def interface_labels(designer: Designer, checked: bool) -> None:
    designer.parts.editor.scene.show_interface_labels(checked)
    designer.parts.settings.setValue(LABELS_KEY, checked)


def presentation(designer: Designer, on: bool) -> None:
    """The canvas in large type with thick links, the menus and panels larger too, the lab fitted to the view."""
    parts = designer.parts
    font = QFont(designer.usual_font)
    font.setPointSizeF(designer.usual_font.pointSizeF() * (PRESENTATION_UI if on else 1.0))
    QApplication.setFont(font)
    parts.terminals.set_scale(PRESENTATION_UI if on else 1.0)
    parts.editor.scene.set_presentation(on)
    QTimer.singleShot(0, lambda: parts.present_side_docks(on))  # once the docks have the new font
    parts.view.fit_to_view()


def full_screen(designer: Designer, on: bool) -> None:
    if on:
        designer.window.showFullScreen()
    else:
        designer.window.showNormal()


def set_theme(designer: Designer, name: str) -> None:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    apply_theme(app, name)
    designer.actions[f"view.theme.{name}"].setChecked(True)
    designer.parts.settings.setValue(THEME_KEY, name)


def fill_panels(designer: Designer, menu: QMenu) -> None:
    for dock in designer.parts.docks():
        menu.addAction(dock.toggleViewAction())


def setting(key: str, default: bool) -> Callable[[Designer], bool]:
    return lambda designer: bool(designer.parts.settings.value(key, default, type=bool))


def choose_theme(name: str) -> Callable[[Designer, bool], None]:
    return lambda designer, _checked: set_theme(designer, name)


THEME_ACTIONS = tuple(Action(f"view.theme.{name}", name.capitalize(), toggle=choose_theme(name), group="theme")
                      for name in THEMES)

MENU = Menu("&View", (
    Action("view.link_mode", "Draw &links", toggle=lambda d, on: setattr(d.parts.view, "link_mode", on),
           keys=("L",), scope=Scope.CANVAS,
           tip="Drag from node to node to link them (Shift: choose the ports). A right-drag links in any mode, with a "
               "port menu. Escape ends it."),
    Action("view.snap", "&Snap to grid", toggle=snap, initially=setting(SNAP_KEY, False)),
    Action("view.interface_labels", "Show &interface labels", toggle=interface_labels,
           initially=setting(LABELS_KEY, True)),
    Action("view.domains", "&Broadcast domains", made_by=lambda d: d.parts.domains.toggle, keys=("Ctrl+Shift+B",)),
    Action("view.rates", "Link &rates", made_by=lambda d: d.parts.rates.toggle, keys=("Ctrl+Shift+T",)),
    SEPARATOR,
    # Ctrl+=: the "+" key unshifted, as most keyboards have it
    Action("view.zoom_in", "Zoom &in", lambda d: d.parts.view.zoom_by(1.25), keys=(Key.ZoomIn, "Ctrl+=")),
    Action("view.zoom_out", "Zoom &out", lambda d: d.parts.view.zoom_by(0.8), keys=(Key.ZoomOut,)),
    Action("view.zoom_reset", "&Actual size", lambda d: d.parts.view.reset_zoom(), keys=("Ctrl+0",)),
    Action("view.fit", "&Fit to view", lambda d: d.parts.view.fit_to_view(), keys=("Ctrl+1",)),
    Action("view.presentation", "&Presentation mode", toggle=presentation, keys=("Ctrl+Shift+P",),
           tip="Large type and thick links, for a projector"),
    Action("view.full_screen", "&Full screen", toggle=full_screen, keys=("F11",)),
    SEPARATOR,
    Submenu("view.theme", "&Theme", THEME_ACTIONS),
    Submenu("view.panels", "&Panels", fill=fill_panels),
))
