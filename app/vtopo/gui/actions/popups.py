"""The context menus of a node, a link and the empty canvas: the table's actions, the entries features add
(designer.menus), and a few that act on the spot the menu opened at."""
from __future__ import annotations

from functools import partial

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QMenu

from vtopo.gui.actions import edit, lab
from vtopo.gui.actions.designer import Designer


def _menu(designer: Designer) -> QMenu:
    menu = QMenu(designer.window)
    menu.setToolTipsVisible(True)  # a greyed-out entry says why when the mouse rests on it
    return menu


def link_menu(designer: Designer, link_id: str) -> QMenu:
    """The context menu of a link: the link becomes the selection."""
    designer.parts.editor.scene.select_ids([link_id])
    menu = _menu(designer)
    menu.addActions([designer.actions["edit.properties"], designer.actions["edit.delete"]])
    menu.addSeparator()
    designer.menus.fill(menu, "link", link_id)
    return menu


def node_menu(designer: Designer, node_id: str) -> QMenu:
    """The context menu of a node; the node joins the selection first if it is not in it."""
    editor, measure, actions = designer.parts.editor, designer.parts.measure, designer.actions
    if node_id not in editor.scene.selected_node_ids():
        editor.scene.select_ids([node_id])
    menu = _menu(designer)
    menu.addActions([actions[name] for name in ("lab.terminal", "lab.external_terminal", "edit.rename",
                                                "edit.properties")])
    menu.addSeparator()
    menu.addActions([actions["edit.duplicate"], actions["edit.copy"], actions["edit.delete"]])
    menu.addSeparator()
    if len(editor.scene.selected_node_ids()) == 2:
        menu.addAction(actions["lab.iperf_pair"])
        source, destination = editor.scene.selected_node_ids()
        for text, reachable in (("Expect reachable", True), ("Expect unreachable", False)):
            menu.addAction(text, partial(designer.parts.checks.expect, source, destination, reachable))
    for text, pick in (("Measure from here", measure.from_node), ("Measure to here", measure.to_node)):
        action = menu.addAction(text, partial(pick, node_id))
        action.setEnabled(measure.can_measure(node_id))
    menu.addSeparator()
    menu.addAction("Explain this node", designer.parts.explain_selection)
    designer.menus.fill(menu, "node", node_id)
    return menu


def canvas_menu(designer: Designer, at: QPoint) -> QMenu:
    view, actions = designer.parts.view, designer.actions
    scene_at = view.mapToScene(view.mapFromGlobal(at))
    menu = _menu(designer)
    menu.addAction("Paste here", lambda: edit.paste(designer, scene_at)).setEnabled(designer.enabled("edit.paste"))
    menu.addAction("Add note here", lambda: edit.annotate(designer, "note", scene_at))
    menu.addAction("Add rectangle here", lambda: edit.annotate(designer, "rect", scene_at))
    menu.addSeparator()
    menu.addActions([actions["edit.select_all"], actions["view.fit"]])
    menu.addSeparator()
    menu.addActions([actions[action.id] for action in edit.AUTO_LAYOUT])
    return menu


def activate_node(designer: Designer, node_id: str) -> None:
    """A double-click: a running node opens its terminal or console; otherwise the node is renamed."""
    designer.parts.editor.scene.select_ids([node_id])
    if designer.enabled("lab.terminal"):
        lab.open_terminal(designer)
    elif not designer.parts.deploy.deployed_lab:
        designer.parts.view.start_rename(node_id)
    else:
        designer.say(designer.actions["lab.terminal"].toolTip(), 6000)
