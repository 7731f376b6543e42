"""Before the window closes, or another lab replaces this one, while the lab is deployed or being deployed: leave it
running, or end it first. Through the agent a lab outlives the designer; without one, a deploy dies with it."""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QAbstractButton, QMessageBox, QWidget

from vtopo.gui.panels.deploy import DeployController

Then = Callable[[], None]
"""What the user was doing (close the window, open a lab), done again once the lab is ended."""

KEEP_WORKING = "Keep working"


class Leaving:
    def __init__(self, window: QWidget, deploy: DeployController, destroy: Then) -> None:
        """`destroy` tears the lab down as Lab ▸ Destroy does, without asking again."""
        self._window = window
        self._deploy = deploy
        self._destroy = destroy

    def may_leave(self, then: Then) -> bool:
        """Whether the window may leave the lab now. When the user chose to end it first, that starts, and `then`
        runs once it has ended."""
        deploy, lab = self._deploy, self._deploy.deployed_lab or self._deploy.lab_name
        if deploy.deploying:
            choices = ["Cancel the deploy", *(["Leave it deploying"] if deploy.outlives_window else []), KEEP_WORKING]
            answer = ask(self._window, f"Lab {lab} is being deployed",
                          "Cancel the deploy: it stops after its current step and everything it built is removed; "
                          "then the window goes on." + (" Leave it deploying: the vtopo agent finishes it, and "
                                                        "`vtopo status` shows it." if deploy.outlives_window else
                                                        " (Without a vtopo agent, the deploy runs in this window "
                                                        "and cannot outlive it.)"), choices)
            if answer == "Cancel the deploy":
                self._after_job(then, deploy.cancel)
                return not deploy.busy
            return answer == "Leave it deploying"
        if deploy.busy:  # a destroy, or a change to the running lab: it ends by itself in a moment
            self._after_job(then, lambda: None)
            return False
        if deploy.deployed_lab:
            answer = ask(self._window, f"Lab {lab} is running",
                          "Leave it running: it goes on using this host's CPU and memory, `vtopo status` lists it and "
                          "opening the lab again shows it. Destroy it: its nodes, links and VMs are removed.",
                          ["Leave it running", "Destroy it", KEEP_WORKING])
            if answer == "Destroy it":
                self._after_job(then, self._destroy)
                return False
            return answer == "Leave it running"
        return True

    def _after_job(self, then: Then, start: Then) -> None:
        """Start a job (destroy, cancel) and run `then` when this window's job ends."""
        deploy = self._deploy

        def ended(busy: bool) -> None:
            if not busy:
                deploy.busy_changed.disconnect(ended)
                then()

        start()
        if deploy.busy:
            deploy.busy_changed.connect(ended)


def ask(parent: QWidget, text: str, informative: str, choices: list[str]) -> str:
    box = QMessageBox(QMessageBox.Icon.Question, "vtopo", text, QMessageBox.StandardButton.NoButton, parent)
    box.setInformativeText(informative)
    buttons: dict[QAbstractButton, str] = {}
    for choice in choices:
        button = box.addButton(choice, QMessageBox.ButtonRole.RejectRole if choice == KEEP_WORKING else
                               QMessageBox.ButtonRole.AcceptRole)
        buttons[button] = choice
        if choice == KEEP_WORKING:
            keep = button
    box.setDefaultButton(keep)
    box.setEscapeButton(keep)
    box.exec()
    return buttons.get(box.clickedButton(), KEEP_WORKING)
