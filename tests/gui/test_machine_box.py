"""The inspector shows what runs behind a deployed VM: the backend, QEMU's pid, whether vhost-net is in effect."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.gui.helpers import answer_next_dialog, click
from vtopo.gui.main_window import MainWindow


@pytest.mark.privileged
def test_selecting_a_running_vm_shows_its_qemu_and_vhost(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    from vtopo.gui.panels.deploy import load_deployer

    window = make_window("vm-router", deployer_loader=load_deployer)
    qtbot.waitUntil(lambda: not window.deploy.busy, timeout=30_000)
    box = window.inspector.node_form.machine
    scene = window.editor.scene
    click(window.view, scene.nodes["vmr"].pos())
    assert box.isHidden(), "nothing runs before the lab is deployed"
    try:
        with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=180_000):
            window.menu_actions.deploy.trigger()
        qtbot.waitUntil(box.isVisible, timeout=5_000)  # vmr is selected, and now it runs
        click(window.view, scene.nodes["c1"].pos())
        qtbot.waitUntil(box.isHidden, timeout=5_000)  # a container runs no machine
        click(window.view, scene.nodes["vmr"].pos())

        def read() -> None:  # the inspector follows the selection a moment later: wait for the box, then its text
            assert box.isVisible() and "vhost-net:" in box.text.text(), f"the Machine box says {box.text.text()!r}"

        qtbot.waitUntil(read, timeout=10_000)
        text = box.text.text()
        assert "backend: " in text
        pid = int(text.split("QEMU pid: ", 1)[1].split()[0])
        assert "qemu-system-x86" in Path(f"/proc/{pid}/comm").read_text()
        if not Path("/dev/vhost-net").exists():
            assert "vhost-net: off: the kernel has no vhost-net" in text
    finally:
        with qtbot.waitSignal(window.deploy.busy_changed, check_params_cb=lambda busy: not busy, timeout=120_000):
            answer_next_dialog("Destroy")
            window.menu_actions.destroy.trigger()
        box.wait()


def test_the_lab_chooses_how_its_vms_run_in_one_undo_step(make_window: Callable[..., MainWindow],
                                                          qtbot: QtBot) -> None:
    window = make_window("vm-router")
    form = window.inspector.lab_form
    qtbot.waitUntil(form.vm_backend.isVisible)
    assert form.vm_backend.currentText() == "automatically"
    qtbot.mouseClick(form.vm_backend, Qt.MouseButton.LeftButton)
    qtbot.keyClick(form.vm_backend.view(), Qt.Key.Key_Down)
    qtbot.keyClick(form.vm_backend.view(), Qt.Key.Key_Down)
    qtbot.keyClick(form.vm_backend.view(), Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.editor.topology.vm_backend == "qemu")
    assert form.vm_backend.currentText() == "as QEMU processes"
    qtbot.keyClick(window.view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: form.vm_backend.currentText() == "automatically")
    assert window.editor.topology.vm_backend == ""
