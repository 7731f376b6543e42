"""Before a deploy, the designer asks the user about everything the lab would reach outside itself.

A lab file can ask for a host device, a host file or startup commands run inside a node, and place nodes on other
machines (sites); only the user's answer here allows it, for this deploy. A device or a node's commands is a yes/no
question that names it and says what allowing it does. A file must be chosen by the user in a file dialog, which opens
on the file the lab names; choosing another file allows nothing (the VM's disk image setting is where another file is
named). The other sites are listed together, each with what ssh would use to reach it, none ticked.
"""
from __future__ import annotations

import os

from PySide6.QtWidgets import (QCheckBox, QDialog, QDialogButtonBox, QFileDialog, QLabel, QMessageBox, QVBoxLayout,
                               QWidget)

from vtopo.compile.startup import STARTUP_COMMANDS
from vtopo.lab_terms import Trust
from vtopo.model.problems import ConsentRequest, Problem
from vtopo.model.sites import Site

HOST_FILE = "disk image"


def requests_in(problems: list[Problem]) -> list[ConsentRequest]:
    return list(dict.fromkeys(p.consent for p in problems if p.consent is not None))


def blocking(problems: list[Problem]) -> list[Problem]:
    """The errors that consent cannot clear: Deploy stays disabled while there are any."""
    return [p for p in problems if p.consent is None]


def ask(parent: QWidget, requests: list[ConsentRequest]) -> Trust | None:
    """One question per host device, file or node's commands; None as soon as the user refuses one."""
    devices: set[str] = set()
    images: set[str] = set()
    commands: set[str] = set()
    for request in requests:
        if request.what == HOST_FILE:
            chosen = _choose_file(parent, request)
            if chosen != request.name:
                if chosen is not None:
                    QMessageBox.information(parent, "Another file", f"The lab asks for {request.name}, and you chose "
                                            f"{chosen}. To boot another file, name it in the VM's disk image setting "
                                            "and deploy again.")
                return None
            images.add(chosen)
        elif _allowed(parent, request):
            (commands if request.what == STARTUP_COMMANDS else devices).add(request.name)
        else:
            return None
    return Trust(host_devices=frozenset(devices), images=frozenset(images), startup_commands=frozenset(commands))


def ask_sites(parent: QWidget, sites: list[Site]) -> frozenset[str] | None:
    """The sites the user ticks for vtopo to connect to (none is ticked at first); None when the user cancels."""
    if not sites:
        return frozenset()
    from vtopo.sites.spread import connection_of

    dialog = QDialog(parent)
    dialog.setObjectName("consent-sites")
    dialog.setWindowTitle("Connect to other machines?")
    text = QLabel(f"This lab places nodes on {len(sites)} other machine{'s' if len(sites) > 1 else ''}. To deploy "
                  "them, vtopo connects to each with ssh, as the user named there, and that machine's vtopo agent "
                  "builds its part. The lab file cannot allow this by itself: tick each machine to connect to for "
                  "this deploy.")
    text.setWordWrap(True)
    layout = QVBoxLayout(dialog)
    layout.addWidget(text)
    boxes = {site.name: QCheckBox(f"site {site.name}: {connection_of(site)}") for site in sites}
    for box in boxes.values():
        layout.addWidget(box)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
    buttons.addButton("Deploy", QDialogButtonBox.ButtonRole.AcceptRole)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(buttons)
    accepted = dialog.exec() == QDialog.DialogCode.Accepted
    dialog.deleteLater()
    return frozenset(name for name, box in boxes.items() if box.isChecked()) if accepted else None


def _allowed(parent: QWidget, request: ConsentRequest) -> bool:
    if request.what == STARTUP_COMMANDS:
        title = f"Run the startup commands of {request.name}?"
        text = f"This lab wants to run commands inside {request.name}, as you."
    else:
        title = f"Allow the {request.what} {request.name}?"
        text = f"This lab wants to use the {request.what} {request.name}, which is outside the lab."
    box = QMessageBox(QMessageBox.Icon.Warning, title, text,
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
    accepted = dialog.exec() == QDialog.DialogCode.Accepted
    chosen = dialog.selectedFiles()
    dialog.deleteLater()
    return os.path.normpath(chosen[0]) if accepted and chosen else None


def _sentence(text: str) -> str:
    return f"{text[0].upper()}{text[1:]}."
