"""The main window: the canvas in the middle, docks around it, and the wiring between them."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QWidget

from vtopo.gui.actions.builder import Actions
from vtopo.gui.capture.panel import CaptureController, CapturePanel
from vtopo.gui.canvas.icons import IconCache
from vtopo.gui.canvas.states import legend_html
from vtopo.gui.canvas.view import CanvasView
from vtopo.gui.console.dock import TerminalTabs
from vtopo.gui.document.analysis import LabAnalyzer
from vtopo.gui.document.check_process import AnalysisReply
from vtopo.gui.document.editor import Editor
from vtopo.gui.document.files import FileController
from vtopo.gui.host_api import DeployerLoader
from vtopo.gui.measure.controller import MeasureController, find_deployed
from vtopo.gui.measure.experiment import ExperimentController
from vtopo.gui.measure.panel import MeasurePanel
from vtopo.gui.overlays.broadcast_domains import DomainView
from vtopo.gui.overlays.rates import RateView
from vtopo.gui.panels.checks import ChecksController, ChecksPanel
from vtopo.gui.panels.exercise import ExerciseController, ExercisePanel
from vtopo.gui.panels.deploy import DeployController, DeployLog, DeployProgress, load_deployer
from vtopo.gui.panels.explain import SELECTION, ExplainPanel
from vtopo.gui.panels.inspector import Inspector
from vtopo.gui.panels.kind_palette import KindPalette
from vtopo.gui.panels.leaving import Leaving
from vtopo.gui.panels.operate_panel import OperateController
from vtopo.gui.panels.checkpoints import CheckpointsController
from vtopo.gui.panels.save_running import SaveRunningController
from vtopo.gui.panels.problems import ProblemsPanel
from vtopo.gui.workers import GuiThreadCollector
from vtopo.kinds.registry import Registry


BOTTOM_DOCK_HEIGHT = 300
FIRST_BOTTOM_DOCK_HEIGHT = 260  # about ten rows of Problems, Checks or packets
SIDE_DOCK_MARGIN = 12  # px a side dock keeps beside its content
GEOMETRY_KEY, DOCKS_KEY = "window/geometry", "window/docks"


class MainWindow(QMainWindow):
    def __init__(self, registry: Registry, settings: QSettings, autosave_dir: Path,
                 deployer_loader: DeployerLoader = load_deployer,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        GuiThreadCollector.install()
        self.settings = settings
        self.icons = IconCache(registry)
        self.editor = Editor(registry, self.icons, self)
        self.view = CanvasView(self.editor)
        self.setCentralWidget(self.view)
        self.palette_list = KindPalette(registry, self.icons)
        self.inspector = Inspector(self.editor)
        self.problems = ProblemsPanel()
        self.explain = ExplainPanel()
        self.log = DeployLog()
        self.measure_panel = MeasurePanel()
        self.checks_panel = ChecksPanel()
        self.progress = DeployProgress()
        self.progress.setMaximumWidth(240)
        self.progress.hide()
        self.drift = QLabel()
        self.legend = QLabel(legend_html())
        self.legend.setToolTip("The dot at a node's top right shows its state once the lab is deployed")
        self.statusBar().addPermanentWidget(self.drift)
        self.statusBar().addPermanentWidget(self.legend)
        self.statusBar().addPermanentWidget(self.progress)
        # a message takes the legend's place while it shows, so the legend never cuts it off
        self.statusBar().messageChanged.connect(lambda message: self.legend.setVisible(not message))
        self._docks: list[QDockWidget] = []
        left = Qt.DockWidgetArea.LeftDockWidgetArea
        right = Qt.DockWidgetArea.RightDockWidgetArea
        bottom = Qt.DockWidgetArea.BottomDockWidgetArea
        self.kinds_dock = self._dock("Kinds", self.palette_list, left)
        self._usual_side_widths: list[int] = []  # the Kinds and Inspector docks' widths before presentation mode
        self.inspector_dock = self._dock("Inspector", self.inspector, right)
        self.exercise_panel = ExercisePanel()
        self.exercise_dock = self._dock("Exercise", self.exercise_panel, right)
        self.tabifyDockWidget(self.inspector_dock, self.exercise_dock)
        self.inspector_dock.raise_()
        problems_dock = self._dock("Problems", self.problems, bottom)
        self.explain_dock = self._dock("Explain", self.explain, bottom)
        self.explain_dock.visibilityChanged.connect(self.explain.set_shown)
        log_dock = self._dock("Deploy log", self.log, bottom)
        self.measure_dock = self._dock("Measure", self.measure_panel, bottom)
        self.tabifyDockWidget(problems_dock, self.explain_dock)
        self.tabifyDockWidget(self.explain_dock, log_dock)
        self.tabifyDockWidget(log_dock, self.measure_dock)
        self.capture_panel = CapturePanel()
        self.capture_dock = self._dock("Capture", self.capture_panel, bottom)
        self.tabifyDockWidget(self.measure_dock, self.capture_dock)
        domains_dock = self._dock("Broadcast domains", QWidget(), bottom)
        self.tabifyDockWidget(self.capture_dock, domains_dock)
        self.domains = DomainView(self.editor.scene, domains_dock, self)
        self.checks_dock = self._dock("Checks", self.checks_panel, bottom)
        self.tabifyDockWidget(domains_dock, self.checks_dock)
        self.terminals = TerminalTabs()
        self.terminals.dock = self._dock("Terminal", self.terminals, bottom)
        self.tabifyDockWidget(self.checks_dock, self.terminals.dock)
        problems_dock.raise_()
        self.resizeDocks([problems_dock], [FIRST_BOTTOM_DOCK_HEIGHT], Qt.Orientation.Vertical)
        for roomy in (self.explain_dock, self.measure_dock, self.terminals.dock):
            roomy.visibilityChanged.connect(lambda visible, dock=roomy: self._make_room(dock, visible))
        self.resizeDocks([self._docks[0], self._docks[1]], [190, 330], Qt.Orientation.Horizontal)

        self.analyzer = LabAnalyzer(self.editor, parent=self)
        self.files = FileController(self.editor, self, settings, autosave_dir)
        self.deploy = DeployController(self.editor, self.log, self.progress, deployer_loader, self)
        self.measure = MeasureController(self.editor, self.files, self.deploy, self.measure_panel,
                                         self.measure_dock, self)
        self.inspector.node_form.machine.find_lab = find_deployed
        self.inspector.node_form.status_details = lambda: self.deploy.details
        self.inspector.follow_states(self.deploy.states_changed)
        self.capture = CaptureController(self.editor, self.deploy, self.capture_panel, self.capture_dock, self)
        self.rates = RateView(self.editor.scene, self.deploy, self)
        self.checks = ChecksController(self.editor, self.checks_panel, parent=self)
        self.exercise = ExerciseController(self.editor, self.exercise_panel, self.checks,
                                           lambda: self.files.path.parent if self.files.path else None, self)
        self.experiment = ExperimentController(self.editor, self.measure_panel, parent=self)
        self.save_running = SaveRunningController(self.editor, self.deploy, self.log, self)
        self.checkpoints = CheckpointsController(self.editor, self.deploy, self.log, self)
        self.menu_actions = Actions(self, self)
        self.operate = OperateController(self.editor, self.deploy, self.menu_actions.menus, self.log, self)
        self.leaving = Leaving(self, self.deploy, self.menu_actions.destroy_now)
        self._running_as: tuple[object, ...] = ()  # the running lab's nodes and links, as check results saw them
        self.files.may_leave = self.leaving.may_leave
        self._wire()
        self._update_title()
        self.setAcceptDrops(True)
        self.resize(1400, 900)
        geometry, docks = settings.value(GEOMETRY_KEY), settings.value(DOCKS_KEY)
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        if isinstance(docks, QByteArray):
            self.restoreState(docks)  # the docks as the user left them: where, which shown, how large
        theme = str(settings.value("view/theme", "system"))
        self.menu_actions.themes.get(theme, self.menu_actions.themes["system"]).setChecked(True)
        if theme != "system":
            self.menu_actions.set_theme(theme)

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(title.lower().replace(" ", "-"))
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        self._docks.append(dock)
        return dock

    def docks(self) -> list[QDockWidget]:
        return list(self._docks)

    def _wire(self) -> None:
        editor, scene = self.editor, self.editor.scene
        self.palette_list.place_requested.connect(
            lambda kind: editor.place_node(kind, self.view.mapToScene(self.view.viewport().rect().center())))
        editor.topology_replaced.connect(self.view.fit_when_shown)
        editor.topology_replaced.connect(lambda: self.exercise_dock.raise_() if editor.topology.stages else None)
        self.view.node_context_menu.connect(self.menu_actions.node_menu)
        self.view.link_context_menu.connect(self.menu_actions.link_menu)
        self.view.node_activated.connect(self.menu_actions.activate_node)
        self.view.canvas_context_menu.connect(self.menu_actions.canvas_menu)
        editor.status_message.connect(lambda text: self.statusBar().showMessage(text, 6000))
        self.analyzer.busy_changed.connect(self._checking)
        self.analyzer.analysed.connect(self._analysed)
        self.analyzer.explained.connect(self.explain.show_explanation)
        self.explain.explanation_wanted.connect(self.analyzer.explain)
        self.problems.subject_activated.connect(self.reveal)
        scene.selectionChanged.connect(lambda: self.explain.set_selected_nodes(scene.selected_node_ids()))
        self.files.path_changed.connect(self._update_title)
        self.files.modified_changed.connect(self.setWindowModified)
        editor.model_changed.connect(self._update_title)
        self.deploy.drift_changed.connect(self.drift.setText)
        self.deploy.states_changed.connect(self._lab_state_changed)
        self.rates.message.connect(lambda text: self.statusBar().showMessage(text, 6000))
        self.operate.message.connect(lambda text: self.statusBar().showMessage(text, 6000))
        self.save_running.message.connect(lambda text: self.statusBar().showMessage(text, 6000))
        self.checkpoints.message.connect(lambda text: self.statusBar().showMessage(text, 6000))
        self.exercise.checkpoint_reached.connect(self.checkpoints.restore)

    def _lab_state_changed(self) -> None:
        """Check results and a measured path say what was true of the lab as it ran: once a node stops, a link goes
        down or the lab is destroyed, they go."""
        deploy = self.deploy
        running = (deploy.deployed_lab, frozenset(deploy.states.items()), frozenset(deploy.links_down))
        if running != self._running_as:
            self._running_as = running
            self.checks.forget_results(bool(deploy.deployed_lab))
            self.editor.scene.highlight_path([], "measure")

    def _checking(self, busy: bool) -> None:
        if busy:
            self.problems.show_busy()

    def _analysed(self, analysis: AnalysisReply) -> None:
        problems = analysis.problems
        self.editor.scene.mark_problems(zip(problems.subject_ids, problems.severities))
        self.problems.show_problems(problems)
        self.explain.show_analysis(analysis, self.editor.topology)
        self.domains.show_analysis(analysis)

    def _update_title(self) -> None:
        where = f" — {self.files.path}" if self.files.path else " — unsaved"
        self.setWindowTitle(f"{self.editor.topology.name}[*]{where} — vtopo")
        self.setWindowModified(self.files.modified)

    def reveal(self, item_id: str) -> None:
        """Select a node, link or note and bring it into view."""
        item = self.editor.scene.item_for(item_id)
        if item is None:
            return
        self.editor.scene.select_ids([item_id])
        self.view.ensureVisible(item, 60, 60)

    def show_inspector(self) -> None:
        self.inspector_dock.show()
        self.inspector_dock.raise_()

    def present_side_docks(self, on: bool) -> None:
        """In presentation mode, the Kinds and Inspector docks as wide as their content needs in its larger font
        (nothing scrolls sideways or is cut off); after it, as wide as they were."""
        docks = [self.kinds_dock, self.inspector_dock]
        if not on:
            if self._usual_side_widths:
                self.resizeDocks(docks, self._usual_side_widths, Qt.Orientation.Horizontal)
            return
        self._usual_side_widths = [dock.width() for dock in docks]
        palette, inspector = self.palette_list, self.inspector
        needed = [palette.sizeHintForColumn(0) + palette.verticalScrollBar().sizeHint().width(),
                  inspector.stack.minimumSizeHint().width() + inspector.verticalScrollBar().sizeHint().width()]
        frames = [2 * palette.frameWidth() + SIDE_DOCK_MARGIN, 2 * inspector.frameWidth() + SIDE_DOCK_MARGIN]
        self.resizeDocks(docks, [max(width, need + frame) for width, need, frame in
                                 zip(self._usual_side_widths, needed, frames)], Qt.Orientation.Horizontal)

    def explain_selection(self) -> None:
        self.explain.scope.setCurrentIndex(SELECTION)
        self.explain_dock.show()
        self.explain_dock.raise_()

    def _make_room(self, dock: QDockWidget, visible: bool) -> None:
        """A bottom dock that is shown gets a useful height (the tabs it shares its place with need less)."""
        if visible and not dock.isFloating() and dock.height() < BOTTOM_DOCK_HEIGHT:
            self.resizeDocks([dock], [BOTTOM_DOCK_HEIGHT], Qt.Orientation.Vertical)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(url.toLocalFile().endswith(".vtopo") for url in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        for url in event.mimeData().urls():
            if url.toLocalFile().endswith(".vtopo"):
                self.files.open_path(Path(url.toLocalFile()))
                event.acceptProposedAction()
                return

    def _close_again(self) -> None:
        self.close()

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.leaving.may_leave(self._close_again) or not self.files.maybe_save():
            event.ignore()
            return
        self.settings.setValue(GEOMETRY_KEY, self.saveGeometry())
        self.settings.setValue(DOCKS_KEY, self.saveState())
        self.measure_panel.shutdown()
        self.measure.shutdown()
        self.capture.shutdown()
        self.rates.shutdown()
        self.operate.wait()
        self.deploy.stop_following()
        self.checks.shutdown()
        self.experiment.shutdown()
        self.terminals.shutdown()
        self.analyzer.shutdown()
        self.editor.scene.release()
        event.accept()
