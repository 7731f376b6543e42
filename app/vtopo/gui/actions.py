"""Menus, toolbar and shortcuts. Each action calls one method of a controller; no editing logic lives here."""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Callable, Protocol

from PySide6.QtCore import QPoint, QPointF, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QCursor, QFont, QIcon, QKeySequence
from PySide6.QtWidgets import (QApplication, QDockWidget, QFileDialog, QMainWindow, QMenu, QMessageBox, QStyle,
                               QWidget)

from vtopo.gui.canvas import export
from vtopo.gui.capture.panel import CaptureController
from vtopo.gui.console import terminal
from vtopo.gui.console.dock import TerminalTabs
from vtopo.gui.canvas.states import NodeState
from vtopo.gui.canvas.view import CanvasView
from vtopo.gui.context_menus import ContextMenus
from vtopo.gui.document.analysis import LabAnalyzer
from vtopo.gui.document.editor import ALIGN_MODES, Editor
from vtopo.gui.document.files import FileController
from vtopo.layout import LAYOUTS
from vtopo.gui.measure.controller import MeasureController
from vtopo.gui.overlays.domains import DomainView
from vtopo.gui.overlays.rates import RateView
from vtopo.gui.panels import consent
from vtopo.gui.panels.checks import ChecksController
from vtopo.gui.panels.deploy import DeployController, confirm_destroy
from vtopo.gui.panels.deploy_request import DeployRequest
from vtopo.gui.panels.checkpoints import CheckpointsController
from vtopo.gui.panels.save_running import SaveRunningController
from vtopo.gui.theme import THEMES, apply_theme
from vtopo.interop.diagram import to_dot, to_drawio
from vtopo.gui.toolbar import build_toolbar, deploy_icon, destroy_icon, history_button
from vtopo.kinds.contract import NodeKind
from vtopo.model.io import write_atomically



class WindowParts(Protocol):
    """What the actions drive: the parts the main window is made of."""

    editor: Editor
    files: FileController
    view: CanvasView
    deploy: DeployController
    save_running: SaveRunningController
    checkpoints: CheckpointsController
    measure: MeasureController
    capture: CaptureController
    checks: ChecksController
    domains: DomainView
    rates: RateView
    analyzer: LabAnalyzer
    terminals: TerminalTabs
    settings: QSettings

    def docks(self) -> list[QDockWidget]: ...

    def explain_selection(self) -> None: ...

    def show_inspector(self) -> None: ...

    def present_side_docks(self, on: bool) -> None: ...

Key = QKeySequence.StandardKey
SNAP_KEY = "view/snap-to-grid"
PRESENTATION_UI = 1.35  # presentation mode: menus and panels this much larger
LABELS_KEY = "view/interface-labels"
DIAGRAMS = {"drawio": to_drawio, "dot": to_dot}  # export formats another program draws and edits
FORMAT_LABELS = {"drawio": "draw.io", "dot": "Graphviz dot"}


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

    def __init__(self, window: QMainWindow, parts: WindowParts) -> None:
        self.window = window
        self.parts = parts
        editor, files, view = parts.editor, parts.files, parts.view
        style = window.style()
        sp = QStyle.StandardPixmap

        self.new = self._action("&New lab", files.new_lab, Key.New, style.standardIcon(sp.SP_FileIcon))
        self.open = self._action("&Open…", files.open_dialog, Key.Open, style.standardIcon(sp.SP_DialogOpenButton))
        self.save = self._action("&Save", files.save, Key.Save, style.standardIcon(sp.SP_DialogSaveButton))
        self.save_as = self._action("Save &as…", files.save_as, Key.SaveAs)
        self.import_lab = self._action("&Import containerlab or GNS3…", files.import_dialog, "Ctrl+I")
        self.export_png = self._action("Export as &PNG…", lambda: self.export("png"))
        self.export_svg = self._action("Export as S&VG…", lambda: self.export("svg"))
        self.export_print = self._action("Export for p&rint (PNG, white, no grid)…",
                                         lambda: self.export("png", for_print=True))
        self.export_drawio = self._action("Export as &draw.io…", lambda: self.export("drawio"))
        self.export_dot = self._action("Export as Graphviz d&ot…", lambda: self.export("dot"))
        self.quit = self._action("&Quit", window.close, (Key.Quit, "Ctrl+Q"))  # a platform may bind Quit to no key

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
        self.paste = self._action("&Paste", lambda: self._paste(), Key.Paste, scope=canvas)
        self.duplicate = self._action("&Duplicate", editor.duplicate_selection, "Ctrl+D", scope=canvas)
        self.delete = self._action("De&lete", editor.delete_selection, (Key.Delete, "Backspace"), scope=canvas)
        self.select_all = self._action("Select &all", self._select_all, Key.SelectAll, scope=canvas)
        self.add_note = self._action("Add &note", lambda: self._annotate("note"), "Ctrl+Shift+N")
        self.add_rect = self._action("Add &rectangle", lambda: self._annotate("rect"), "Ctrl+Shift+R")
        self.align = {mode: self._action(text, lambda checked=False, m=mode: editor.align(m),
                                         "Ctrl+G" if mode == "grid" else ())
                      for mode, text in ALIGN_MODES.items()}

        self.auto_layout = {style: self._action(text, lambda checked=False, s=style: self._auto_layout(s),
                                                "Ctrl+Shift+L" if style == "layered" else ())
                            for style, text in LAYOUTS.items()}
        self.rename = self._action("&Rename", self._rename_selected, "F2", scope=canvas)
        self.properties = self._action("P&roperties", parts.show_inspector)
        self.link_mode = self._action("Draw &links", self._toggle_link_mode, "L", scope=canvas)
        self.link_mode.setCheckable(True)
        self.link_mode.setToolTip("Drag from node to node to link them (Shift: choose the ports). "
                                  "A right-drag links in any mode, with a port menu. Escape ends it.")
        parts.view.link_mode_left.connect(lambda: self.link_mode.setChecked(False))
        self.interface_labels = self._action("Show &interface labels", self._toggle_interface_labels)
        self.interface_labels.setCheckable(True)
        self.interface_labels.setChecked(bool(parts.settings.value(LABELS_KEY, True, type=bool)))
        editor.scene.show_interface_labels(self.interface_labels.isChecked())
        self.snap = self._action("&Snap to grid", self._toggle_snap)
        self.snap.setCheckable(True)
        self.snap.setChecked(bool(parts.settings.value(SNAP_KEY, False, type=bool)))
        editor.scene.snap_to_grid = self.snap.isChecked()
        # Ctrl+=: the "+" key unshifted, as most keyboards have it
        self.zoom_in = self._action("Zoom &in", lambda: view.zoom_by(1.25), (Key.ZoomIn, "Ctrl+="))
        self.zoom_out = self._action("Zoom &out", lambda: view.zoom_by(0.8), Key.ZoomOut)
        self.zoom_reset = self._action("&Actual size", view.reset_zoom, "Ctrl+0")
        self.fit = self._action("&Fit to view", view.fit_to_view, "Ctrl+1")
        self.presentation = self._action("&Presentation mode", self._toggle_presentation, "Ctrl+Shift+P")
        self.presentation.setCheckable(True)
        self.presentation.setToolTip("Large type and thick links, for a projector")
        self.full_screen = self._action("&Full screen", self._toggle_full_screen, "F11")
        self.full_screen.setCheckable(True)
        self._usual_font = QApplication.font()

        deploy = parts.deploy
        self.deploy_request = DeployRequest(window, parts.analyzer, deploy)
        self.deploy = self._action("&Deploy", self.deploy_request.press, "F5", deploy_icon())
        self.destroy = self._action("D&estroy…", self._destroy, "Shift+F5", destroy_icon())
        self.status = self._action("Refresh &status", deploy.refresh_status)
        self.save_running = self._action("Save &running configuration…", parts.save_running.save_running)
        self.save_running.setToolTip("Write what the running lab has become (routers' configurations typed in vtysh, "
                                     "hosts' addresses and routes) into the lab, after showing what changes")
        self.checkpoints = self._action("Chec&kpoints…", parts.checkpoints.open)
        self.checkpoints.setToolTip("Keep named states of the running lab in the lab, and put one back (only what "
                                    "differs changes)")
        self.cancel_deploy = self._action("&Cancel deploy", deploy.cancel, (), destroy_icon())
        self.cancel_deploy.setToolTip("Stop the deploy after its current step and remove what it built")
        self.edit_sites = self._action("S&ites…", self._edit_sites)
        self.edit_sites.setToolTip("The machines this lab may place nodes on, each reached over ssh")
        self.suggest_sites = self._action("Suggest &placement over sites…", self._suggest_sites)
        self.suggest_sites.setToolTip("Split the lab over two sites: VM memory balanced, few links between them")
        self.running_labs = QMenu("&Running labs", window)
        self.running_labs.aboutToShow.connect(self._fill_running_labs)
        self.terminal = self._action("Open &terminal", self.open_terminal, "Ctrl+T")
        self.external_terminal = self._action("Open in e&xternal terminal", self.open_external_terminal)
        self.iperf_pair = self._action("iperf between these two", self._iperf_pair)
        self.show_measure = self._action("&Measure…", parts.measure.show_panel, "Ctrl+M")

        self.theme_group = QActionGroup(window)
        self.themes: dict[str, QAction] = {}
        for name in THEMES:
            action = self._action(name.capitalize(), lambda checked=False, n=name: self.set_theme(n))
            action.setCheckable(True)
            self.theme_group.addAction(action)
            self.themes[name] = action

        self.menus = ContextMenus()
        parts.capture.register_menu_entries(self.menus)
        self.recent_menu = QMenu("Open &recent", window)
        self._build_menus()
        self._build_toolbar()
        files.recent_changed.connect(self._fill_recent)
        self._fill_recent()
        editor.scene.selectionChanged.connect(self.update_enabled)
        deploy.busy_changed.connect(self.update_enabled)
        deploy.states_changed.connect(self.update_enabled)
        deploy.labs_changed.connect(self.update_enabled)
        self.deploy_request.waiting_changed.connect(self.update_enabled)
        parts.analyzer.analysed.connect(self.update_enabled)
        parts.measure.targets_changed.connect(self.update_enabled)
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
        file_menu.addAction(self.import_lab)
        file_menu.addSeparator()
        file_menu.addActions([self.export_png, self.export_svg, self.export_print, self.export_drawio, self.export_dot])
        file_menu.addSeparator()
        file_menu.addAction(self.quit)
        edit = bar.addMenu("&Edit")
        edit.addActions([self.undo, self.redo])
        edit.addSeparator()
        edit.addActions([self.cut, self.copy, self.paste, self.duplicate, self.delete, self.select_all, self.rename])
        edit.addSeparator()
        edit.addActions([self.add_note, self.add_rect])
        edit.addSeparator()
        align = edit.addMenu("&Align")
        align.addActions(list(self.align.values()))
        edit.addActions(list(self.auto_layout.values()))
        view = bar.addMenu("&View")
        view.addActions([self.link_mode, self.snap, self.interface_labels, self.parts.domains.toggle,
                         self.parts.rates.toggle])
        view.addSeparator()
        view.addActions([self.zoom_in, self.zoom_out, self.zoom_reset, self.fit])
        view.addActions([self.presentation, self.full_screen])
        view.addSeparator()
        themes = view.addMenu("&Theme")
        themes.addActions(list(self.themes.values()))
        panels = view.addMenu("&Panels")
        for dock in self.parts.docks():
            panels.addAction(dock.toggleViewAction())
        lab = bar.addMenu("&Lab")
        lab.addActions([self.deploy, self.cancel_deploy, self.destroy, self.status, self.save_running,
                        self.checkpoints])
        lab.addMenu(self.running_labs)
        lab.addSeparator()
        lab.addActions([self.edit_sites, self.suggest_sites])
        lab.addSeparator()
        lab.addActions([self.terminal, self.external_terminal, self.show_measure, self.iperf_pair])
        for menu in bar.findChildren(QMenu):
            menu.setToolTipsVisible(True)  # a greyed-out entry says why when the mouse rests on it

    def _context_menu(self) -> QMenu:
        menu = QMenu(self.window)
        menu.setToolTipsVisible(True)
        return menu

    def _build_toolbar(self) -> None:
        stack = self.parts.editor.undo_stack
        self.toolbar_undo = history_button(self.window, stack, redo=False)
        self.toolbar_redo = history_button(self.window, stack, redo=True)
        build_toolbar(self.window, [[self.new, self.open, self.save], [self.toolbar_undo, self.toolbar_redo],
                                    [self.link_mode, self.snap, self.add_note, self.fit],
                                    [self.deploy, self.cancel_deploy, self.destroy, self.terminal]])

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.parts.files.recent():
            self.recent_menu.addAction(str(path), partial(self.parts.files.open_path, path))
        self.recent_menu.setEnabled(not self.recent_menu.isEmpty())

    # ------------------------------------------------------------ slots that need a little glue

    def _paste(self, at: QPointF | None = None) -> None:
        """At the cursor when it is over the canvas (or at the given point), always in view."""
        view = self.parts.view
        cursor = view.viewport().mapFromGlobal(QCursor.pos())
        if at is None and view.viewport().rect().contains(cursor):
            at = view.mapToScene(cursor)
        self.parts.editor.paste(at, view.mapToScene(view.viewport().rect()).boundingRect())

    def _select_all(self) -> None:
        for item in self.parts.editor.scene.items():
            if item.flags() & item.GraphicsItemFlag.ItemIsSelectable:
                item.setSelected(True)

    def _annotate(self, shape: str, at: QPointF | None = None) -> None:
        view = self.parts.view
        where = at if at is not None else view.mapToScene(view.viewport().rect().center())
        annotation = self.parts.editor.add_annotation(shape, where)
        self.parts.editor.scene.select_ids([annotation.id])

    def _auto_layout(self, style: str) -> None:
        self.parts.editor.auto_layout(style)
        self.parts.view.fit_to_view()

    def _toggle_link_mode(self, checked: bool) -> None:
        self.parts.view.link_mode = checked

    def _toggle_presentation(self, on: bool) -> None:
        """The canvas in large type with thick links, the menus and panels larger too, the lab fitted to the view."""
        font = QFont(self._usual_font)
        font.setPointSizeF(self._usual_font.pointSizeF() * (PRESENTATION_UI if on else 1.0))
        QApplication.setFont(font)
        self.parts.terminals.set_scale(PRESENTATION_UI if on else 1.0)
        self.parts.editor.scene.set_presentation(on)
        QTimer.singleShot(0, lambda: self.parts.present_side_docks(on))  # once the docks have the new font
        self.parts.view.fit_to_view()

    def _toggle_full_screen(self, on: bool) -> None:
        if on:
            self.window.showFullScreen()
        else:
            self.window.showNormal()

    def _toggle_snap(self, checked: bool) -> None:
        self.parts.editor.scene.snap_to_grid = checked
        self.parts.settings.setValue(SNAP_KEY, checked)

    def _toggle_interface_labels(self, checked: bool) -> None:
        self.parts.editor.scene.show_interface_labels(checked)
        self.parts.settings.setValue(LABELS_KEY, checked)

    def _destroy(self) -> None:
        deploy, topology = self.parts.deploy, self.parts.editor.topology
        if self.destroy.isEnabled() and confirm_destroy(self.window, deploy.deployed_lab, topology):
            self.destroy_now()

    def destroy_now(self) -> None:
        self.parts.terminals.shutdown()  # a shell left inside would keep its namespace alive
        self.parts.deploy.destroy()

    def _fill_running_labs(self) -> None:
        """Every lab deployed on this host, with its owner and what the agent does to it now."""
        from vtopo.protocol import user_name

        self.running_labs.clear()
        labs = self.parts.deploy.running_labs
        for entry in labs:
            doing = f", {entry.doing}" if entry.doing else ""
            mine = " (this window's lab)" if entry.lab == self.parts.deploy.deployed_lab else ""
            self.running_labs.addAction(f"{entry.lab} — {user_name(entry.owner)}{doing}{mine}").setEnabled(False)
        if not labs:
            self.running_labs.addAction("no lab is deployed on this host").setEnabled(False)

    def set_theme(self, name: str) -> None:
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        apply_theme(app, name)
        self.themes[name].setChecked(True)
        self.parts.settings.setValue("view/theme", name)

    def export(self, fmt: str, for_print: bool = False) -> None:
        """Export the canvas as a picture (png, svg), or the lab as a diagram another program edits (drawio, dot)."""
        label = FORMAT_LABELS.get(fmt, fmt.upper())
        title = "Export for print (PNG, white, no grid)" if for_print else f"Export as {label}"
        topology = self.parts.editor.topology
        name, _ = QFileDialog.getSaveFileName(self.window, title, f"{topology.name}.{fmt}", f"{label} (*.{fmt})")
        if not name:
            return
        path = Path(name)
        scene = self.parts.editor.scene
        if fmt in DIAGRAMS:
            try:
                write_atomically(path, DIAGRAMS[fmt](topology))
                ok = True
            except OSError:
                ok = False
        else:
            ok = export.export_png(scene, path, for_print=for_print) if fmt == "png" else \
                export.export_svg(scene, path, topology.name, for_print=for_print)
        self.window.statusBar().showMessage(f"exported {path}" if ok else f"could not write {path}", 5000)

    def selected_node(self) -> str:
        nodes = self.parts.editor.scene.selected_node_ids()
        return nodes[0] if len(nodes) == 1 else ""

    def _terminal_target(self, action: QAction) -> tuple[str, str, NodeKind | None] | None:
        """The lab, name and kind of the selected node, when `action` can open a terminal on it."""
        node_id = self.selected_node()
        if not node_id or not action.isEnabled():
            return None
        editor = self.parts.editor
        node = editor.topology.nodes[node_id]
        return self.parts.deploy.deployed_lab or editor.topology.name, node.name, editor.registry.get(node.kind)

    def open_terminal(self) -> None:
        """A tab in the terminal dock on the selected node."""
        if target := self._terminal_target(self.terminal):
            try:
                self.parts.terminals.open(target[1], terminal.node_argv(*target))
            except OSError as error:
                self.window.statusBar().showMessage(f"the terminal on {target[1]} did not start: {error}", 5000)

    def open_external_terminal(self) -> None:
        if (target := self._terminal_target(self.external_terminal)) and not terminal.open_terminal(*target):
            self.window.statusBar().showMessage("the terminal emulator did not start", 5000)

    def _edit_sites(self) -> None:
        from vtopo.gui.panels.sites_editor import SitesEditorDialog

        dialog = SitesEditorDialog(self.window, self.parts.editor.topology)
        if dialog.exec() == SitesEditorDialog.DialogCode.Accepted:
            self.parts.editor.set_sites(dialog.sites)

    def _suggest_sites(self) -> None:
        from vtopo.gui.panels.sites_editor import site_choices
        from vtopo.gui.panels.sites_placement import SitesPlacementDialog

        topology = self.parts.editor.topology
        if len(site_choices(topology)) < 2:
            QMessageBox.information(self.window, "Suggest placement", "The lab names no other machine yet: add one "
                                    "in Lab > Sites… first.")
            return
        dialog = SitesPlacementDialog(self.window, topology)
        if dialog.exec() == SitesPlacementDialog.DialogCode.Accepted and dialog.placement is not None:
            self.parts.editor.place_on_sites(dialog.placement.sites)

    def update_enabled(self) -> None:
        editor, deploy = self.parts.editor, self.parts.deploy
        scene = editor.scene
        has_selection = bool(scene.selectedItems())
        has_nodes = bool(scene.selected_node_ids() or scene.selected_annotation_ids())
        for action in (self.cut, self.copy, self.duplicate):
            action.setEnabled(has_nodes)
        self.delete.setEnabled(has_selection)
        for action in self.align.values():
            action.setEnabled(has_nodes)
        self.rename.setEnabled(bool(self.selected_node()))
        deployer_missing = deploy.deployer() is None
        analysis = self.parts.analyzer.latest
        errors = bool(analysis is not None and consent.blocking(analysis.errors))
        self.deploy.setEnabled(not deployer_missing and not deploy.busy and not deploy.agent_doing and not errors
                               and not self.deploy_request.waiting)
        self.deploy.setToolTip(deploy.unavailable or ("fix the errors in the Problems panel first" if errors
                                                      else "Deploy the lab on this host"))
        self.destroy.setEnabled(not deployer_missing and not deploy.busy and not deploy.agent_doing
                                and bool(deploy.deployed_lab))
        self.cancel_deploy.setEnabled(deploy.deploying)
        self.destroy.setToolTip(deploy.unavailable or (f"Tear down everything lab {deploy.deployed_lab} created"
                                                       if deploy.deployed_lab else "the lab is not deployed"))
        self.status.setEnabled(not deployer_missing and not deploy.busy)
        self.save_running.setEnabled(not deployer_missing and not deploy.busy and bool(deploy.deployed_lab))
        node_id = self.selected_node()
        if not node_id:
            reason = external_reason = "select one node"
        else:
            node = editor.topology.nodes[node_id]
            running = deploy.state_of(node.name) is NodeState.RUNNING
            reason = terminal.unavailable_reason(editor.registry.get(node.kind), running)
            external_reason = terminal.external_unavailable_reason(editor.registry.get(node.kind), running)
        self.terminal.setEnabled(not reason)
        self.terminal.setToolTip(f"Open a terminal on the node ({reason})" if reason else
                                 "Open a terminal on the selected node in the Terminal panel")
        self.external_terminal.setEnabled(not external_reason)
        self.external_terminal.setToolTip(f"Open a terminal window ({external_reason})" if external_reason else
                                          "Open a terminal on the selected node in a window of its own")
        pair = scene.selected_node_ids()
        measurable = len(pair) == 2 and all(self.parts.measure.can_measure(node_id) for node_id in pair)
        self.iperf_pair.setEnabled(measurable)
        self.iperf_pair.setToolTip("Measure from the first selected node to the second" if measurable else
                                   "select two nodes of the deployed lab that can run iperf3")

    def _iperf_pair(self) -> None:
        pair = self.parts.editor.scene.selected_node_ids()
        if len(pair) == 2 and self.iperf_pair.isEnabled():
            self.parts.measure.between(pair[0], pair[1])

    def _rename_selected(self) -> None:
        node_id = self.selected_node()
        if node_id:
            self.parts.view.start_rename(node_id)

    def activate_node(self, node_id: str) -> None:
        """A double-click: a running node opens its terminal or console; otherwise the node is renamed."""
        self.parts.editor.scene.select_ids([node_id])
        if self.terminal.isEnabled():
            self.open_terminal()
        elif not self.parts.deploy.deployed_lab:
            self.parts.view.start_rename(node_id)
        else:
            self.window.statusBar().showMessage(self.terminal.toolTip(), 6000)

    def node_menu(self, node_id: str, at: QPoint) -> None:
        menu = self.node_menu_for(node_id)
        menu.exec(at)
        menu.deleteLater()

    def link_menu(self, link_id: str, at: QPoint) -> None:
        menu = self.link_menu_for(link_id)
        menu.exec(at)
        menu.deleteLater()

    def link_menu_for(self, link_id: str) -> QMenu:
        """The context menu of a link: the link becomes the selection."""
        self.parts.editor.scene.select_ids([link_id])
        menu = self._context_menu()
        menu.addActions([self.properties, self.delete])
        menu.addSeparator()
        self.menus.fill(menu, "link", link_id)
        return menu

    def node_menu_for(self, node_id: str) -> QMenu:
        """The context menu of a node; the node joins the selection first if it is not in it."""
        editor, measure = self.parts.editor, self.parts.measure
        if node_id not in editor.scene.selected_node_ids():
            editor.scene.select_ids([node_id])
        menu = self._context_menu()
        menu.addActions([self.terminal, self.external_terminal, self.rename, self.properties])
        menu.addSeparator()
        menu.addActions([self.duplicate, self.copy, self.delete])
        menu.addSeparator()
        if len(editor.scene.selected_node_ids()) == 2:
            menu.addAction(self.iperf_pair)
            source, destination = editor.scene.selected_node_ids()
            for text, reachable in (("Expect reachable", True), ("Expect unreachable", False)):
                menu.addAction(text, partial(self.parts.checks.expect, source, destination, reachable))
        for text, pick in (("Measure from here", measure.from_node), ("Measure to here", measure.to_node)):
            action = menu.addAction(text, partial(pick, node_id))
            action.setEnabled(measure.can_measure(node_id))
        menu.addSeparator()
        menu.addAction("Explain this node", self.parts.explain_selection)
        self.menus.fill(menu, "node", node_id)
        return menu

    def canvas_menu(self, at: QPoint) -> None:
        view = self.parts.view
        scene_at = view.mapToScene(view.mapFromGlobal(at))
        menu = self._context_menu()
        menu.addAction("Paste here", lambda: self._paste(scene_at)).setEnabled(self.paste.isEnabled())
        menu.addAction("Add note here", lambda: self._annotate("note", scene_at))
        menu.addAction("Add rectangle here", lambda: self._annotate("rect", scene_at))
        menu.addSeparator()
        menu.addActions([self.select_all, self.fit])
        menu.addSeparator()
        menu.addActions(list(self.auto_layout.values()))
        menu.exec(at)
