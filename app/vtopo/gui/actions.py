"""Menus, toolbar and shortcuts. Each action calls one method of a controller; no editing logic lives here."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QAction, QActionGroup, QIcon, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QMenu, QStyle, QToolBar, QWidget

from vtopo.gui import terminal
from vtopo.gui.canvas import export
from vtopo.gui.canvas.states import NodeState
from vtopo.gui.panels import consent
from vtopo.gui.theme import THEMES, apply_theme

if TYPE_CHECKING:
    from vtopo.gui.main_window import MainWindow

Key = QKeySequence.StandardKey


Shortcut = QKeySequence.StandardKey | str


def key_sequences(*keys: Shortcut) -> list[QKeySequence]:
    """Every binding of the keys, each once: a platform's standard key may already be one of our extras, and a key
    bound twice to one action is ambiguous, so Qt fires neither."""
    unique: list[QKeySequence] = []
    for key in keys:
        for sequence in QKeySequence.keyBindings(key) if isinstance(key, Key) else [QKeySequence(key)]:
            if not sequence.isEmpty() and sequence not in unique:
                unique.append(sequence)
    return unique


class Actions:
    """Every QAction of the main window, grouped into the menu bar and the toolbar."""

    def __init__(self, window: MainWindow) -> None:
        self.window = window
        editor, files, view = window.editor, window.files, window.view
        style = window.style()
        sp = QStyle.StandardPixmap

        self.new = self._action("&New lab", files.new_lab, Key.New, style.standardIcon(sp.SP_FileIcon))
        self.open = self._action("&Open…", files.open_dialog, Key.Open, style.standardIcon(sp.SP_DialogOpenButton))
        self.save = self._action("&Save", files.save, Key.Save, style.standardIcon(sp.SP_DialogSaveButton))
        self.save_as = self._action("Save &as…", files.save_as, Key.SaveAs)
        self.export_png = self._action("Export as &PNG…", lambda: self.export("png"))
        self.export_svg = self._action("Export as S&VG…", lambda: self.export("svg"))
        self.quit = self._action("&Quit", window.close, Key.Quit)

        self.undo = editor.undo_stack.createUndoAction(window, "&Undo")
        self.undo.setShortcuts(key_sequences(Key.Undo))
        self.redo = editor.undo_stack.createRedoAction(window, "&Redo")
        self.redo.setShortcuts(key_sequences(Key.Redo, "Ctrl+Shift+Z", "Ctrl+Y"))
        for action in (self.undo, self.redo):
            window.addAction(action)
        # editing the selection: bound on the canvas only, so that Delete or Ctrl+C in a panel's table stays there
        canvas = view
        self.cut = self._action("Cu&t", editor.cut_selection, Key.Cut, scope=canvas)
        self.copy = self._action("&Copy", editor.copy_selection, Key.Copy, scope=canvas)
        self.paste = self._action("&Paste", self._paste, Key.Paste, scope=canvas)
        self.duplicate = self._action("&Duplicate", editor.duplicate_selection, "Ctrl+D", scope=canvas)
        self.delete = self._action("De&lete", editor.delete_selection, (Key.Delete, "Backspace"), scope=canvas)
        self.select_all = self._action("Select &all", self._select_all, Key.SelectAll, scope=canvas)
        self.add_note = self._action("Add &note", lambda: self._annotate("note"), "Ctrl+Shift+N")
        self.add_rect = self._action("Add &rectangle", lambda: self._annotate("rect"), "Ctrl+Shift+R")
        self.align_left = self._action("Align &left", lambda: editor.align("left"))
        self.align_top = self._action("Align &top", lambda: editor.align("top"))
        self.align_grid = self._action("Align to &grid", lambda: editor.align("grid"), "Ctrl+G")

        self.link_mode = self._action("Draw &links", self._toggle_link_mode, "L", scope=canvas)
        self.link_mode.setCheckable(True)
        self.link_mode.setToolTip("Drag from node to node to link them (Shift: choose the ports). "
                                  "A right-drag links in any mode, with a port menu.")
        self.snap = self._action("&Snap to grid", self._toggle_snap)
        self.snap.setCheckable(True)
        self.zoom_in = self._action("Zoom &in", lambda: view.zoom_by(1.25), Key.ZoomIn)
        self.zoom_out = self._action("Zoom &out", lambda: view.zoom_by(0.8), Key.ZoomOut)
        self.zoom_reset = self._action("&Actual size", view.reset_zoom, "Ctrl+0")
        self.fit = self._action("&Fit to view", view.fit_to_view, "Ctrl+1")

        deploy = window.deploy
        self.deploy = self._action("&Deploy", self.deploy_lab, "F5", style.standardIcon(sp.SP_MediaPlay))
        self.destroy = self._action("D&estroy", deploy.destroy, "Shift+F5", style.standardIcon(sp.SP_MediaStop))
        self.status = self._action("Refresh &status", deploy.refresh_status)
        self.terminal = self._action("Open &terminal", self.open_terminal, "Ctrl+T")
        self.iperf_pair = self._action("iperf between these two", self._iperf_pair)
        self.show_measure = self._action("&Measure…", window.measure.show_panel, "Ctrl+M")

        self.theme_group = QActionGroup(window)
        self.themes: dict[str, QAction] = {}
        for name in THEMES:
            action = self._action(name.capitalize(), lambda checked=False, n=name: self.set_theme(n))
            action.setCheckable(True)
            self.theme_group.addAction(action)
            self.themes[name] = action

        self.recent_menu = QMenu("Open &recent", window)
        self._build_menus()
        self._build_toolbar()
        files.recent_changed.connect(self._fill_recent)
        self._fill_recent()
        editor.scene.selectionChanged.connect(self.update_enabled)
        deploy.busy_changed.connect(self.update_enabled)
        deploy.states_changed.connect(self.update_enabled)
        window.analyzer.analysed.connect(self.update_enabled)
        window.measure.targets_changed.connect(self.update_enabled)
        self.update_enabled()

    def _action(self, text: str, slot: Callable[..., object], shortcut: Shortcut | tuple[Shortcut, ...] = (),
                icon: QIcon | None = None, scope: QWidget | None = None) -> QAction:
        """An action whose shortcut works anywhere in the window, or only while `scope` (or a child) has focus."""
        action = QAction(text, self.window)
        if icon is not None:
            action.setIcon(icon)
        action.setShortcuts(key_sequences(*(shortcut if isinstance(shortcut, tuple) else (shortcut,))))
        action.triggered.connect(slot)
        if scope is not None:
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        (scope or self.window).addAction(action)
        return action

    def _build_menus(self) -> None:
        bar = self.window.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addActions([self.new, self.open])
        file_menu.addMenu(self.recent_menu)
        file_menu.addActions([self.save, self.save_as])
        file_menu.addSeparator()
        file_menu.addActions([self.export_png, self.export_svg])
        file_menu.addSeparator()
        file_menu.addAction(self.quit)
        edit = bar.addMenu("&Edit")
        edit.addActions([self.undo, self.redo])
        edit.addSeparator()
        edit.addActions([self.cut, self.copy, self.paste, self.duplicate, self.delete, self.select_all])
        edit.addSeparator()
        edit.addActions([self.add_note, self.add_rect])
        edit.addSeparator()
        edit.addActions([self.align_left, self.align_top, self.align_grid])
        view = bar.addMenu("&View")
        view.addActions([self.link_mode, self.snap, self.window.domains.toggle, self.window.rates.toggle])
        view.addSeparator()
        view.addActions([self.zoom_in, self.zoom_out, self.zoom_reset, self.fit])
        view.addSeparator()
        themes = view.addMenu("&Theme")
        themes.addActions(list(self.themes.values()))
        panels = view.addMenu("&Panels")
        for dock in self.window.docks():
            panels.addAction(dock.toggleViewAction())
        lab = bar.addMenu("&Lab")
        lab.addActions([self.deploy, self.destroy, self.status])
        lab.addSeparator()
        lab.addActions([self.terminal, self.show_measure, self.iperf_pair])

    def _build_toolbar(self) -> None:
        toolbar = QToolBar("Main", self.window)
        toolbar.setObjectName("main-toolbar")
        toolbar.addActions([self.new, self.open, self.save])
        toolbar.addSeparator()
        toolbar.addActions([self.undo, self.redo])
        toolbar.addSeparator()
        toolbar.addActions([self.link_mode, self.snap, self.add_note, self.fit])
        toolbar.addSeparator()
        toolbar.addActions([self.deploy, self.destroy, self.terminal])
        self.window.addToolBar(toolbar)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.window.files.recent():
            self.recent_menu.addAction(str(path), lambda p=path: self.window.files.open_path(p))
        self.recent_menu.setEnabled(not self.recent_menu.isEmpty())

    # ------------------------------------------------------------ slots that need a little glue

    def _paste(self) -> None:
        self.window.editor.paste()

    def _select_all(self) -> None:
        for item in self.window.editor.scene.items():
            if item.flags() & item.GraphicsItemFlag.ItemIsSelectable:
                item.setSelected(True)

    def _annotate(self, shape: str, at: QPointF | None = None) -> None:
        view = self.window.view
        where = at if at is not None else view.mapToScene(view.viewport().rect().center())
        annotation = self.window.editor.add_annotation(shape, where)
        self.window.editor.scene.select_ids([annotation.id])

    def _toggle_link_mode(self, checked: bool) -> None:
        self.window.view.link_mode = checked

    def _toggle_snap(self, checked: bool) -> None:
        self.window.editor.scene.snap_to_grid = checked

    def set_theme(self, name: str) -> None:
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        apply_theme(app, name)
        self.themes[name].setChecked(True)
        self.window.settings.setValue("view/theme", name)

    def export(self, fmt: str) -> None:
        name, _ = QFileDialog.getSaveFileName(self.window, f"Export as {fmt.upper()}",
                                              f"{self.window.editor.topology.name}.{fmt}", f"{fmt.upper()} (*.{fmt})")
        if not name:
            return
        path = Path(name)
        ok = export.export_png(self.window.editor.scene, path) if fmt == "png" else \
            export.export_svg(self.window.editor.scene, path, self.window.editor.topology.name)
        self.window.statusBar().showMessage(f"exported {path}" if ok else f"could not write {path}", 5000)

    def selected_node(self) -> str:
        nodes = self.window.editor.scene.selected_node_ids()
        return nodes[0] if len(nodes) == 1 else ""

    def open_terminal(self) -> None:
        node_id = self.selected_node()
        if not node_id or not self.terminal.isEnabled():
            return
        editor = self.window.editor
        node = editor.topology.nodes[node_id]
        lab = self.window.deploy.deployed_lab or editor.topology.name
        if not terminal.open_terminal(lab, node.name, editor.registry.get(node.kind)):
            self.window.statusBar().showMessage("the terminal emulator did not start", 5000)

    def deploy_lab(self) -> None:
        analysis = self.window.analyzer.latest
        granted = consent.ask(self.window, consent.requests_in(analysis.problems if analysis else []))
        if granted is not None:
            self.window.deploy.deploy(granted)

    def update_enabled(self) -> None:
        editor, deploy = self.window.editor, self.window.deploy
        scene = editor.scene
        has_selection = bool(scene.selectedItems())
        has_nodes = bool(scene.selected_node_ids() or scene.selected_annotation_ids())
        for action in (self.cut, self.copy, self.duplicate):
            action.setEnabled(has_nodes)
        self.delete.setEnabled(has_selection)
        for action in (self.align_left, self.align_top, self.align_grid):
            action.setEnabled(has_nodes)
        deployer_missing = deploy.deployer() is None
        analysis = self.window.analyzer.latest
        errors = bool(analysis is not None and consent.blocking(analysis.errors))
        self.deploy.setEnabled(not deployer_missing and not deploy.busy and not errors)
        self.deploy.setToolTip(deploy.unavailable or ("fix the errors in the Problems panel first" if errors
                                                      else "Deploy the lab on this host"))
        self.destroy.setEnabled(not deployer_missing and not deploy.busy)
        self.destroy.setToolTip(deploy.unavailable or "Tear down everything the lab created")
        self.status.setEnabled(not deployer_missing and not deploy.busy)
        node_id = self.selected_node()
        if not node_id:
            reason = "select one node"
        else:
            node = editor.topology.nodes[node_id]
            running = deploy.state_of(node.name) is NodeState.RUNNING
            reason = terminal.unavailable_reason(editor.registry.get(node.kind), running)
        self.terminal.setEnabled(not reason)
        self.terminal.setToolTip(f"Open a terminal on the node ({reason})" if reason else
                                 "Open a terminal on the selected node")
        pair = scene.selected_node_ids()
        measurable = len(pair) == 2 and all(self.window.measure.can_measure(node_id) for node_id in pair)
        self.iperf_pair.setEnabled(measurable)
        self.iperf_pair.setToolTip("Measure from the first selected node to the second" if measurable else
                                   "select two nodes of the deployed lab that can run iperf3")

    def _iperf_pair(self) -> None:
        pair = self.window.editor.scene.selected_node_ids()
        if len(pair) == 2 and self.iperf_pair.isEnabled():
            self.window.measure.between(pair[0], pair[1])

    def node_menu(self, node_id: str, at: QPoint) -> None:
        menu = self.node_menu_for(node_id)
        menu.exec(at)
        menu.deleteLater()

    def node_menu_for(self, node_id: str) -> QMenu:
        """The context menu of a node; the node joins the selection first if it is not in it."""
        editor, measure = self.window.editor, self.window.measure
        if node_id not in editor.scene.selected_node_ids():
            editor.scene.select_ids([node_id])
        menu = QMenu(self.window)
        menu.addActions([self.terminal, self.duplicate, self.copy, self.delete])
        menu.addSeparator()
        if len(editor.scene.selected_node_ids()) == 2:
            menu.addAction(self.iperf_pair)
        for text, pick in (("Measure from here", measure.from_node), ("Measure to here", measure.to_node)):
            action = menu.addAction(text, lambda pick=pick: pick(node_id))
            action.setEnabled(measure.can_measure(node_id))
        self.window.capture.add_menu_entries(menu, node_id, editor.scene.selected_node_ids())
        menu.addSeparator()
        menu.addAction("Explain this node", self.window.explain_selection)
        return menu

    def link_menu(self, link_id: str, at: QPoint) -> None:
        menu = self.link_menu_for(link_id)
        menu.exec(at)
        menu.deleteLater()

    def link_menu_for(self, link_id: str) -> QMenu:
        """The context menu of a link: capture on either end."""
        self.window.editor.scene.select_ids([link_id])
        menu = QMenu(self.window)
        self.window.capture.add_link_entries(menu, link_id)
        menu.addSeparator()
        menu.addAction(self.delete)
        return menu

    def canvas_menu(self, at: QPoint) -> None:
        view = self.window.view
        scene_at = view.mapToScene(view.mapFromGlobal(at))
        menu = QMenu(self.window)
        menu.addAction(self.paste)
        menu.addAction("Add note here", lambda: self._annotate("note", scene_at))
        menu.addAction("Add rectangle here", lambda: self._annotate("rect", scene_at))
        menu.addSeparator()
        menu.addActions([self.select_all, self.fit])
        menu.exec(at)
