"""Deploy as the user asks for it: after the lab's check, with the consent that check asks for, and the other sites
the user allows vtopo to connect to.

The questions before a deploy (a host device, a host file, a node's startup commands) come from the latest check of
the lab. Deploy pressed before that check ended, on a lab just opened or a moment after an edit, waits for it:
deployed at once it would have asked nothing, and the lab would have run without what the user did not allow.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QMainWindow

from vtopo.gui.document.analysis import LabAnalyzer
from vtopo.gui.document.check_process import AnalysisReply
from vtopo.gui.panels import consent
from vtopo.gui.panels.deploy import DeployController

MESSAGE_MS = 6000


class DeployRequest(QObject):
    waiting_changed = Signal(bool)

    def __init__(self, window: QMainWindow, analyzer: LabAnalyzer, deploy: DeployController) -> None:
        super().__init__(window)
        self._window = window
        self._analyzer = analyzer
        self._deploy = deploy
        self.waiting = False
        analyzer.analysed.connect(self._checked)

    def press(self) -> None:
        """Deploy now if the lab's check is current, else once it is."""
        if self._analyzer.latest is None or self._analyzer.pending:
            self._window.statusBar().showMessage("checking the lab before deploying it…", MESSAGE_MS)
            self._set_waiting(True)
            self._analyzer.run_soon()
            return
        self._deploy_checked(self._analyzer.latest)

    def _checked(self, analysis: AnalysisReply) -> None:
        if self.waiting:
            self._set_waiting(False)
            # out of the analyzer's hand-back: the consent dialogs run an event loop of their own
            QTimer.singleShot(0, lambda: self._deploy_checked(analysis))

    def _deploy_checked(self, analysis: AnalysisReply) -> None:
        if analysis is not self._analyzer.latest or self._analyzer.pending:  # edited while a dialog was open
            self.press()
            return
        if errors := consent.blocking(analysis.errors()):
            self._window.statusBar().showMessage(f"not deployed: {errors[0]} (see the Problems panel)", MESSAGE_MS)
            return
        sites = consent.ask_sites(self._window, self._deploy.other_sites())
        if sites is None:
            return
        granted = consent.ask(self._window, consent.requests_in(analysis.errors()))
        if granted is not None and (refused := self._deploy.deploy(granted, sites)):
            self._refuse(refused)

    def _refuse(self, why: str) -> None:
        self._window.statusBar().showMessage(f"not deployed: {why}", MESSAGE_MS)

    def _set_waiting(self, waiting: bool) -> None:
        if waiting != self.waiting:
            self.waiting = waiting
            self.waiting_changed.emit(waiting)
