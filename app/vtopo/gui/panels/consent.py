"""Before a deploy, the designer asks the user about everything the lab would reach outside itself.

A lab file can ask for a host device, a disk image or startup commands run inside a node; only the user's answer
here allows it, for this deploy.
"""
from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

from vtopo.compile.startup import STARTUP_COMMANDS
from vtopo.kinds.environment import Trust
from vtopo.model.problems import ConsentRequest, Problem


def requests_in(problems: list[Problem]) -> list[ConsentRequest]:
    return list(dict.fromkeys(p.consent for p in problems if p.consent is not None))


def blocking(problems: list[Problem]) -> list[Problem]:
    """The errors that consent cannot clear: Deploy stays disabled while there are any."""
    return [p for p in problems if p.consent is None]


def ask(parent: QWidget, requests: list[ConsentRequest]) -> Trust | None:
    """One question per request, naming the device, file or commands and what allowing them does; None if any is
    refused."""
    granted: dict[str, set[str]] = {"host device": set(), "disk image": set(), STARTUP_COMMANDS: set()}
    for request in requests:
        if request.what == STARTUP_COMMANDS:
            title = f"Run the startup commands of {request.name}?"
            text = f"This lab wants to run commands inside {request.name}, as root."
        else:
            title = f"Allow the {request.what} {request.name}?"
            text = f"This lab wants to use the {request.what} {request.name}, which is outside the lab."
        box = QMessageBox(QMessageBox.Icon.Warning, title, text,
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, parent)
        box.setInformativeText(f"{request.effect[0].upper()}{request.effect[1:]}.\n\nThe lab file cannot allow this "
                               "by itself. Allow it for this deploy?")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setObjectName("consent")
        if box.exec() != QMessageBox.StandardButton.Yes:
            return None
        granted[request.what].add(request.name)
    return Trust(host_devices=frozenset(granted["host device"]), images=frozenset(granted["disk image"]),
                 startup_commands=frozenset(granted[STARTUP_COMMANDS]))
