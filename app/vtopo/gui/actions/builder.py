"""Makes the table of actions (one module per menu: file, edit, view, lab) into QActions, the menu bar and the
toolbar, and sets each action's enabled state and tip from its rule whenever the designer's state changes."""
from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMainWindow, QMenu

from vtopo.gui.actions import edit, file, lab, popups, view
from vtopo.gui.actions.context import context_of
from vtopo.gui.actions.designer import Designer, WindowParts
from vtopo.gui.actions.spec import Action, Menu, Scope, Separator, Submenu, key_sequences
from vtopo.gui.actions.toolbar import build_toolbar, history_button
from vtopo.gui.canvas.context_menus import ContextMenus

MENUS: tuple[Menu, ...] = (file.MENU, edit.MENU, view.MENU, lab.MENU)
TOOLBAR = (("file.new", "file.open", "file.save"), ("view.link_mode", "view.snap", "edit.add_note", "view.fit"),
           ("lab.deploy", "lab.cancel_deploy", "lab.destroy", "lab.terminal"))  # Undo and Redo after the first


def table() -> list[Action]:
    """Every action of the designer, menu by menu."""
    return [action for menu in MENUS for action in menu.actions()]


class Actions:
    """Every action of the main window, by id (`designer.actions["lab.deploy"]`) and by name (`actions.deploy`)."""

    def __init__(self, window: QMainWindow, parts: WindowParts) -> None:
        self.window = window
        self.parts = parts
        self.designer = Designer(window, parts)
        self.menus: ContextMenus = self.designer.menus
        self._table = table()
        self._groups: dict[str, QActionGroup] = {}
        self._names = {action.name: action.id for action in self._table}
        for action in self._table:
            self.designer.actions[action.id] = self._make(action)
        self._submenus: list[tuple[Submenu, QMenu]] = []
        self._build_menus()
        parts.capture.register_menu_entries(self.menus)
        stack = parts.editor.undo_stack
        self.toolbar_undo = history_button(window, stack, redo=False)
        self.toolbar_redo = history_button(window, stack, redo=True)
        first, *others = [[self.designer.actions[action_id] for action_id in group] for group in TOOLBAR]
        build_toolbar(window, [first, [self.toolbar_undo, self.toolbar_redo], *others])
        self.themes = {action.name: self.designer.actions[action.id] for action in view.THEME_ACTIONS}
        self.align = {action.name: self.designer.actions[action.id] for action in edit.ALIGN}
        parts.view.link_mode_left.connect(lambda: self.link_mode.setChecked(False))
        for changed in (parts.editor.scene.selectionChanged, parts.deploy.busy_changed, parts.deploy.states_changed,
                        parts.deploy.labs_changed, self.designer.deploy_request.waiting_changed,
                        parts.analyzer.analysed, parts.measure.targets_changed, parts.files.recent_changed):
            changed.connect(self.update_enabled)
        self.update_enabled()

    def __getattr__(self, name: str) -> QAction:
        """An action by the last part of its id: `actions.deploy` is lab.deploy."""
        if name.startswith("_") or name not in self._names:
            raise AttributeError(name)
        return self.designer.actions[self._names[name]]

    def _make(self, spec: Action) -> QAction:
        """The QAction of one entry of the table: its keys work anywhere in the window, or only while the canvas
        (or a child of it) has the focus."""
        designer = self.designer
        action = spec.made_by(designer) if spec.made_by is not None else QAction(spec.title, self.window)
        if spec.icon is not None:
            action.setIcon(spec.icon(self.window.style()))
        action.setShortcuts(key_sequences(*spec.keys))
        if isinstance(spec.tip, str) and spec.tip:
            action.setToolTip(spec.tip)
        self._connect(spec, action)
        if spec.group:
            self._groups.setdefault(spec.group, QActionGroup(self.window)).addAction(action)
        if spec.scope is Scope.CANVAS:
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            self.parts.view.addAction(action)
        else:
            self.window.addAction(action)
        return action

    def _connect(self, spec: Action, action: QAction) -> None:
        """The action runs its entry's code; a checkable one starts as `initially` says, and its code learns it."""
        designer = self.designer
        if spec.run is not None:
            run = spec.run
            action.triggered.connect(lambda: run(designer))
        if spec.toggle is not None:
            toggle = spec.toggle
            action.setCheckable(True)
            action.triggered.connect(lambda checked: toggle(designer, checked))
            if spec.initially is not None:
                action.setChecked(spec.initially(designer))
                toggle(designer, action.isChecked())

    def _build_menus(self) -> None:
        bar = self.window.menuBar()
        for menu in MENUS:
            self._fill(bar.addMenu(menu.title), menu.items)
        for shown in bar.findChildren(QMenu):
            shown.setToolTipsVisible(True)  # a greyed-out entry says why when the mouse rests on it

    def _fill(self, menu: QMenu, items: tuple[Action | Separator | Submenu, ...]) -> None:
        for item in items:
            if isinstance(item, Separator):
                menu.addSeparator()
            elif isinstance(item, Action):
                menu.addAction(self.designer.actions[item.id])
            else:
                submenu = QMenu(item.title, self.window)
                menu.addMenu(submenu)
                self._fill(submenu, item.items)
                if item.fill is not None:
                    self._refill(item, submenu)
                    submenu.aboutToShow.connect(lambda entry=item, shown=submenu: self._refill(entry, shown))
                self._submenus.append((item, submenu))

    def _refill(self, item: Submenu, menu: QMenu) -> None:
        assert item.fill is not None
        menu.clear()
        item.fill(self.designer, menu)

    def update_enabled(self) -> None:
        """Each action enabled, and its tip, as its rule says for the designer's state now."""
        context = context_of(self.designer)
        for spec in self._table:
            action = self.designer.actions[spec.id]
            if spec.made_by is None:
                action.setEnabled(spec.enabled_when(context))
            if callable(spec.tip):
                action.setToolTip(spec.tip(context))
        for item, menu in self._submenus:
            menu.setEnabled(item.enabled_when(context))

    @property
    def running_labs(self) -> QMenu:
        return next(menu for item, menu in self._submenus if item.id == "lab.running_labs")

    def set_theme(self, name: str) -> None:
        view.set_theme(self.designer, name)

    def destroy_now(self) -> None:
        lab.destroy_now(self.designer)

    def activate_node(self, node_id: str) -> None:
        popups.activate_node(self.designer, node_id)

    def node_menu_for(self, node_id: str) -> QMenu:
        return popups.node_menu(self.designer, node_id)

    def link_menu_for(self, link_id: str) -> QMenu:
        return popups.link_menu(self.designer, link_id)

    def node_menu(self, node_id: str, at: QPoint) -> None:
        self._popup(self.node_menu_for(node_id), at)

    def link_menu(self, link_id: str, at: QPoint) -> None:
        self._popup(self.link_menu_for(link_id), at)

    def canvas_menu(self, at: QPoint) -> None:
        self._popup(popups.canvas_menu(self.designer, at), at)

    @staticmethod
    def _popup(menu: QMenu, at: QPoint) -> None:
        menu.exec(at)
        menu.deleteLater()
