"""The inspector's "Machine" box for a running VM: the backend, QEMU's pid, and whether vhost-net is really in effect
(what `vtopo status -v` prints), read from the host on a worker thread."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QLabel, QVBoxLayout, QWidget

from vtopo.gui.host_api import LabFinder
from vtopo.gui.workers import Worker, serial_pool


def _no_lab(lab: str) -> tuple[None, str]:
    return None, "the host layer is not connected"


class MachineBox(QGroupBox):
    """Hidden unless the inspected node is a running VM. `find_lab` is set by the main window (the host layer is
    loaded lazily)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Machine", parent)
        self.find_lab: LabFinder = _no_lab
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        QVBoxLayout(self).addWidget(self.text)
        self._pool = serial_pool(self)
        self._shown: tuple[str, str] | None = None  # (lab, node) the box is for
        self._worker: Worker | None = None
        self.hide()

    def show_machine(self, lab: str, node: str | None) -> None:
        """Read the VM `node` of the deployed `lab` (None: not a running VM, hide the box). Once per selection: an
        edit elsewhere in the lab does not read the host again."""
        if node is not None and self._shown == (lab, node):
            return
        self._shown = (lab, node) if node is not None else None
        if node is None:
            self.hide()
            self.text.clear()
            return
        self.text.setText("reading from the host…")
        self.show()
        find_lab, wanted = self.find_lab, (lab, node)
        worker = Worker(lambda _report: (wanted, _machine_lines(find_lab, lab, node)))
        worker.returned.connect(self._arrived)  # a method of this widget: delivered on the GUI thread
        worker.errored.connect(self._failed)
        self._worker = worker  # kept until its signals are delivered
        worker.start(self._pool)

    def _arrived(self, result: tuple[tuple[str, str], list[str]]) -> None:
        wanted, lines = result
        if self._shown == wanted:
            self.text.setText("\n".join(lines))

    def _failed(self, error: Exception) -> None:
        if self._shown is not None:
            self.text.setText(f"cannot read the VM: {error}")

    def wait(self, timeout_ms: int = 5000) -> bool:
        return self._pool.waitForDone(timeout_ms)


def _machine_lines(find_lab: LabFinder, lab: str, node: str) -> list[str]:
    deployed, why = find_lab(lab)
    if deployed is None:
        return [why]
    return deployed.machine_lines(node) or [f"{node} runs no virtual machine"]
