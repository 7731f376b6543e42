"""New, open, save, recent files and autosave. Loading errors are shown to the user, never as a traceback."""
from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QSettings, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from vtopo.gui.document.editor import UNTITLED, Editor
from vtopo.interop.folder import OUTSIDE_FILE
from vtopo.interop.importing import FORMATS as IMPORT_FORMATS
from vtopo.interop.importing import import_lab
from vtopo.model import io
from vtopo.model.problems import LabError, Problem
from vtopo.model.topology import Topology
from vtopo.reports import counted
from vtopo.user_data import cache_home, file_stem

RECENT_KEY = "files/recent"
MAX_RECENT = 8
AUTOSAVE_MS = 3 * 60 * 1000
FILE_FILTER = "vtopo labs (*.vtopo);;All files (*)"


def default_autosave_dir() -> Path:
    return cache_home() / "autosave"


class FileController(QObject):
    """Which file the lab comes from, whether it has unsaved changes, and the files around it."""

    path_changed = Signal()
    modified_changed = Signal(bool)
    recent_changed = Signal()

    def __init__(self, editor: Editor, window: QWidget, settings: QSettings, autosave_dir: Path,
                 autosave_ms: int = AUTOSAVE_MS) -> None:
        super().__init__(window)
        self._editor = editor
        self._window = window
        self._settings = settings
        self.autosave_dir = autosave_dir
        self.path: Path | None = None
        self._restored = False  # the lab came from an autosave: unsaved although the undo stack is clean
        self.may_leave: Callable[[Callable[[], None]], bool] = lambda _then: True
        """Whether the running lab may be left for another (vtopo.gui.panels.leaving); given what to do once it is
        ended, when the user chooses to end it first."""
        editor.undo_stack.cleanChanged.connect(lambda _clean: self.modified_changed.emit(self.modified))
        self._autosave_timer = QTimer(self)  # started by an edit: a lab left alone wakes nothing
        self._autosave_timer.setSingleShot(True)
        self._autosave_timer.setInterval(autosave_ms)
        self._autosave_timer.timeout.connect(self.autosave)
        editor.undo_stack.indexChanged.connect(self._autosave_later)

    @property
    def modified(self) -> bool:
        return self._restored or not self._editor.undo_stack.isClean()

    # ------------------------------------------------------------ opening

    def new_lab(self) -> None:
        if self.may_leave(self.new_lab) and self.maybe_save():
            self._adopt(Topology(name=UNTITLED), None)

    def open_dialog(self) -> None:
        start = str(self.path.parent) if self.path else ""
        name, _ = QFileDialog.getOpenFileName(self._window, "Open lab", start, FILE_FILTER)
        if name:
            self.open_path(Path(name))

    def open_path(self, path: Path, *, as_template: bool = False) -> bool:
        """Open a lab file. A template (the default teaching lab) opens untitled, so Save never overwrites it."""
        if not self.may_leave(lambda: self._open_again(path, as_template)) or not self.maybe_save():
            return False
        try:
            topology = io.load(path)
        except LabError as error:
            details = "\n".join(str(problem) for problem in error.problems)
            QMessageBox.critical(self._window, "Cannot open lab", f"{path} cannot be opened:\n\n{details}")
            return False
        restored = self._offer_autosave(topology, path)
        self._adopt(restored or topology, None if as_template else Path(path), restored=restored is not None)
        if not as_template:
            self._remember(Path(path))
        return True

    def import_dialog(self) -> None:
        start = str(self.path.parent) if self.path else ""
        name, _ = QFileDialog.getOpenFileName(self._window, "Import a containerlab topology or GNS3 project", start,
                                              IMPORT_FORMATS)
        if name:
            self.import_path(Path(name))

    def import_path(self, path: Path, allowed: frozenset[Path] = frozenset()) -> bool:
        """Import another tool's lab as a new, unsaved lab, and say node by node what did not come over. A file it
        names outside its folder is read only when the user picks that very file in a dialog (as --allow-outside)."""
        if not self.may_leave(lambda: self._import_again(path, allowed)) or not self.maybe_save():
            return False
        while True:
            try:
                imported = import_lab(path, self._editor.registry, allowed)
                break
            except LabError as error:
                more = self._allow_outside(error.problems)
                if more:
                    allowed |= more
                    continue
                details = "\n".join(str(problem) for problem in error.problems)
                QMessageBox.critical(self._window, "Cannot import", f"{path} cannot be imported:\n\n{details}")
                return False
        self._adopt(imported.topology, None, restored=True)  # unsaved: Save asks where
        summary = (f"{path.name}: {counted(len(imported.topology.nodes), 'node')}, "
                   f"{counted(len(imported.topology.links), 'link')} imported.\n\n"
                   + "\n".join(f"• {notice}" for notice in imported.notices))
        QMessageBox.information(self._window, "Imported", summary)
        return True

    def _allow_outside(self, problems: list[Problem]) -> frozenset[Path]:
        """The files outside the topology's folder the user allows, by choosing each in a file dialog."""
        allowed = set()
        for problem in problems:
            if problem.consent is None or problem.consent.what != OUTSIDE_FILE:
                continue
            wanted = Path(problem.consent.name)
            name, _ = QFileDialog.getOpenFileName(self._window, f"{problem.subject} reads {wanted}, outside the "
                                                  "topology's folder: choose it to allow it", str(wanted))
            if name and Path(name).resolve() == wanted:
                allowed.add(wanted)
        return frozenset(allowed)

    def _import_again(self, path: Path, allowed: frozenset[Path]) -> None:
        self.import_path(path, allowed)

    def _open_again(self, path: Path, as_template: bool) -> None:
        self.open_path(path, as_template=as_template)

    def _offer_autosave(self, topology: Topology, path: Path) -> Topology | None:
        autosave = self.autosave_path(topology)
        try:
            newer = autosave.stat().st_mtime > Path(path).stat().st_mtime
        except OSError:
            return None
        if not newer:
            return None
        answer = QMessageBox.question(
            self._window, "Restore unsaved changes?",
            f"An autosave of {topology.name} newer than {path} exists ({autosave}).\nRestore it?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        if answer != QMessageBox.StandardButton.Yes:
            return None
        try:
            return io.load(autosave)
        except LabError as error:
            QMessageBox.warning(self._window, "Autosave unreadable", f"{autosave} cannot be restored:\n\n{error}")
            return None

    def _adopt(self, topology: Topology, path: Path | None, *, restored: bool = False) -> None:
        self._editor.set_topology(topology)
        self.path = path
        self._restored = restored
        self.path_changed.emit()
        self.modified_changed.emit(self.modified)

    # ------------------------------------------------------------ saving

    def save(self) -> bool:
        if self.path is None:
            return self.save_as()
        return self._write(self.path)

    def save_as(self) -> bool:
        start = str(self.path or Path.cwd() / f"{self._editor.topology.name}.vtopo")
        name, _ = QFileDialog.getSaveFileName(self._window, "Save lab as", start, FILE_FILTER)
        if not name:
            return False
        path = Path(name) if name.endswith(".vtopo") else Path(name + ".vtopo")
        if self._editor.topology.name == UNTITLED:  # a new lab takes the file's name
            self._editor.update_lab(name=re.sub(r"[^A-Za-z0-9_-]+", "-", path.stem).strip("-") or UNTITLED)
        return self._write(path)

    def _write(self, path: Path) -> bool:
        try:
            io.save(self._editor.topology, path)
        except OSError as error:
            QMessageBox.critical(self._window, "Cannot save lab", f"{path} could not be written: {error.strerror}")
            return False
        self.autosave_path(self._editor.topology).unlink(missing_ok=True)
        self._editor.undo_stack.setClean()
        self._restored = False
        self.path = path
        self._remember(path)
        self.path_changed.emit()
        self.modified_changed.emit(False)
        return True

    def maybe_save(self) -> bool:
        """Ask about unsaved changes. False means the user cancelled."""
        if not self.modified:
            return True
        buttons = (QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
                   | QMessageBox.StandardButton.Cancel)
        answer = QMessageBox.question(self._window, "Unsaved changes",
                                      f"Save the changes to {self._editor.topology.name}?", buttons)
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        if answer == QMessageBox.StandardButton.Discard:
            self.discard_autosave()
            return True
        return False

    # ------------------------------------------------------------ autosave

    def autosave_path(self, topology: Topology) -> Path:
        return self.autosave_dir / f"{file_stem(topology.name)}.vtopo"

    def _autosave_later(self) -> None:
        """Autosave `autosave_ms` after the first edit since the last autosave."""
        if not self._autosave_timer.isActive():
            self._autosave_timer.start()

    def autosave(self) -> Path | None:
        """Write unsaved changes aside (never over the lab's own file)."""
        if not self.modified:
            return None
        path = self.autosave_path(self._editor.topology)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            io.save(self._editor.topology, path)
        except OSError as error:
            self._editor.status_message.emit(f"autosave to {path} failed: {error.strerror}")
            return None
        return path

    def discard_autosave(self) -> None:
        self.autosave_path(self._editor.topology).unlink(missing_ok=True)

    # ------------------------------------------------------------ recent files

    def recent(self) -> list[Path]:
        value = self._settings.value(RECENT_KEY, [])
        names = [value] if isinstance(value, str) else [str(name) for name in value] if isinstance(value, list) else []
        return [Path(name) for name in names if name]

    def _remember(self, path: Path) -> None:
        resolved = str(Path(path).resolve())
        names = [resolved] + [str(p) for p in self.recent() if str(p) != resolved]
        self._settings.setValue(RECENT_KEY, names[:MAX_RECENT])
        self.recent_changed.emit()
