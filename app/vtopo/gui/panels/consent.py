"""Before a deploy, the designer asks the user about everything the lab would reach outside itself.

A lab file can ask for a host device or a host file; only the user's answer here allows it, for this deploy. A
device is a yes/no question that names it and says what the mode does to it. A file is chosen by the user in a
file dialog, which opens on the file the lab names: the user boots that file by choosing it, or picks another,
and the VMs that named it are changed to the file picked (one undo step).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from PySide6.QtWidgets import QDialog, QFileDialog, QMessageBox, QWidget

from vtopo.kinds.environment import Trust
from vtopo.model.problems import ConsentRequest, Problem

HOST_FILE = "disk image"


@dataclass(frozen=True)
class Consent:
    """What the user allowed, and the node settings to change to the files the user picked."""

    trust: Trust = Trust()
    settings: dict[str, dict[str, str]] = field(default_factory=dict)  # node id -> setting -> new value


def requests_in(problems: list[Problem]) -> list[ConsentRequest]:
    return list(dict.fromkeys(p.consent for p in problems if p.consent is not None))


def blocking(problems: list[Problem]) -> list[Problem]:
    """The errors that consent cannot clear: Deploy stays disabled while there are any."""
    return [p for p in problems if p.consent is None]


def ask(parent: QWidget, problems: list[Problem]) -> Consent | None:
    """One question per host device or file the problems ask for; None as soon as the user refuses one."""
    devices: set[str] = set()
    images: set[str] = set()
    settings: dict[str, dict[str, str]] = {}
    for request in requests_in(problems):
        if request.what == HOST_FILE:
            chosen = _choose_file(parent, request)
            if chosen is None:
                return None
            images.add(chosen)
            if chosen != request.name:
                for problem in problems:
                    if problem.consent == request and problem.subject_id:
                        settings.setdefault(problem.subject_id, {})[request.setting] = chosen
        elif _allowed(parent, request):
            devices.add(request.name)
        else:
            return None
    return Consent(Trust(host_devices=frozenset(devices), images=frozenset(images)), settings)


def _allowed(parent: QWidget, request: ConsentRequest) -> bool:
    box = QMessageBox(QMessageBox.Icon.Warning, f"Allow the {request.what} {request.name}?",
                      f"This lab wants to use the {request.what} {request.name}, which is outside the lab.",
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, parent)
    box.setInformativeText(f"{_sentence(request.effect)}\n\nThe lab file cannot allow this by itself. Allow it for "
                           "this deploy?")
    box.setDefaultButton(QMessageBox.StandardButton.No)
    box.setObjectName("consent")
    return box.exec() == QMessageBox.StandardButton.Yes


def _choose_file(parent: QWidget, request: ConsentRequest) -> str | None:
    """The file the user picks to stand for `request.name`, or None if the user cancels."""
    dialog = QFileDialog(parent, f"Choose the {request.what} to use: the lab asks for {request.name}, a file outside "
                                 f"the lab. {_sentence(request.effect)}")
    dialog.setObjectName("consent-file")
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog)  # the native one cannot show the lab's reason
    dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptOpen)
    dialog.setLabelText(QFileDialog.DialogLabel.Accept, "Use this file")
    dialog.setDirectory(os.path.dirname(request.name))
    dialog.selectFile(os.path.basename(request.name))
    if dialog.exec() != QDialog.DialogCode.Accepted or not dialog.selectedFiles():
        return None
    return os.path.normpath(dialog.selectedFiles()[0])


def _sentence(text: str) -> str:
    return f"{text[0].upper()}{text[1:]}."
