"""What an action's code works on: the main window, the parts it is made of, and the actions themselves by id."""
from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow

from vtopo.gui.canvas.context_menus import ContextMenus
from vtopo.gui.canvas.view import CanvasView
from vtopo.gui.capture.panel import CaptureController
from vtopo.gui.console.dock import TerminalTabs
from vtopo.gui.document.analysis import LabAnalyzer
from vtopo.gui.document.editor import Editor
from vtopo.gui.document.files import FileController
from vtopo.gui.measure.controller import MeasureController
from vtopo.gui.overlays.broadcast_domains import DomainView
from vtopo.gui.overlays.rates import RateView
from vtopo.gui.panels.checks import ChecksController
from vtopo.gui.panels.deploy import DeployController
from vtopo.gui.panels.checkpoints import CheckpointsController
from vtopo.gui.panels.deploy_request import DeployRequest
from vtopo.gui.panels.save_running import SaveRunningController

MESSAGE_MS = 5000


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


class Designer:
    """The window and its parts, a deploy as the user asks for it, the entries features add to the context menus,
    and every action of the table once it is built (`actions`, by id)."""

    def __init__(self, window: QMainWindow, parts: WindowParts) -> None:
        self.window = window
        self.parts = parts
        self.deploy_request = DeployRequest(window, parts.analyzer, parts.deploy)
        self.usual_font = QApplication.font()  # presentation mode enlarges it, and gives it back after
        self.menus = ContextMenus()
        self.actions: dict[str, QAction] = {}

    def enabled(self, action_id: str) -> bool:
        return self.actions[action_id].isEnabled()

    def say(self, text: str, ms: int = MESSAGE_MS) -> None:
        self.window.statusBar().showMessage(text, ms)

    def selected_node(self) -> str:
        """The selected node's id when exactly one node is selected, else ""."""
        nodes = self.parts.editor.scene.selected_node_ids()
        return nodes[0] if len(nodes) == 1 else ""
