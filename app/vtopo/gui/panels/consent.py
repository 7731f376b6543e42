"""Before a deploy, the designer asks the user about everything the lab would reach outside itself.

A lab file can ask for a host device or a disk image; only the user's answer here allows it, for this deploy.
"""
from __future__ import annotations

from PySide6.QtWidgets import QMessageBox, QWidget

from vtopo.kinds.environment import Trust
from vtopo.model.problems import ConsentRequest, Problem


def requests_in(problems: list[Problem]) -> list[ConsentRequest]:
    return list(dict.fromkeys(p.consent for p in problems if p.consent is not None))


def blocking(problems: list[Problem]) -> list[Problem]:
    """The errors that consent cannot clear: Deploy stays disabled while there are any."""
    return [p for p in problems if p.consent is None]


def ask(parent: QWidget, requests: list[ConsentRequest]) -> Trust | None:
    """One question per request, naming the device or file and what allowing it does; None if any is refused."""
    devices: set[str] = set()
    images: set[str] = set()
    for request in requests:
        box = QMessageBox(QMessageBox.Icon.Warning, f"Allow the {request.what} {request.name}?",
                          f"This lab wants to use the {request.what} {request.name}, which is outside the lab.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, parent)
        box.setInformativeText(f"{request.effect[0].upper()}{request.effect[1:]}.\n\nThe lab file cannot allow this "
                               "by itself. Allow it for this deploy?")
        box.setDefaultButton(QMessageBox.StandardButton.No)
        box.setObjectName("consent")
        if box.exec() != QMessageBox.StandardButton.Yes:
            return None
        (devices if request.what == "host device" else images).add(request.name)
    return Trust(host_devices=frozenset(devices), images=frozenset(images))
