"""Themes, and the screenshots of docs/ (`make docs`): the default lab, two labs' runs in the Measure dock, and a
VLAN lab in the broadcast-domains view."""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor
from pytestqt.qtbot import QtBot

from tests.gui.helpers import dark_theme
from vlan_labs import vlan_lab
from vtopo.gui.main_window import MainWindow
from vtopo.measure import history_path, load_history, save_history
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

BUILT_SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots"
MEASURED = Path(__file__).resolve().parents[2] / "docs" / "measure"  # real runs: scripts/measure-screenshot.sh


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots are written: VTOPO_SCREENSHOT_DIR (`make docs` names docs/), else build/screenshots in
    the checkout (ignored by git, so a test run changes nothing tracked), or, for a user who may not write in the
    checkout (one who runs another's), a directory of pytest's."""
    if chosen := os.environ.get("VTOPO_SCREENSHOT_DIR"):
        Path(chosen).mkdir(parents=True, exist_ok=True)
        return Path(chosen)
    try:
        BUILT_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    except PermissionError:
        return tmp_path_factory.mktemp("screenshots")
    return BUILT_SCREENSHOTS if os.access(BUILT_SCREENSHOTS, os.W_OK) else tmp_path_factory.mktemp("screenshots")


def name_plate(window: MainWindow) -> QColor:
    """The colour on screen just left of r1's name, inside the plate drawn under it."""
    view, node = window.view, window.editor.scene.nodes["r1"]
    view.reset_zoom()
    view.centerOn(node)
    name = node.occupied()[1]
    at = view.mapFromScene(QPointF(name.left() - 1, name.center().y()))
    return QColor(view.viewport().grab().toImage().pixel(at))


def test_dark_and_light_themes(make_window: Callable[..., MainWindow], qtbot: QtBot) -> None:
    """Every node is drawn again in the theme's colours, a selected one too (it keeps a pixmap of itself)."""
    window = make_window()
    window.editor.scene.select_ids(["r1"])
    light = name_plate(window)
    with dark_theme(window, qtbot):
        assert window.editor.scene.colors.text.lightness() > 180
        assert name_plate(window).lightness() < light.lightness() - 100
        window.menu_actions.themes["light"].trigger()
        qtbot.waitUntil(lambda: window.editor.scene.colors.base.lightness() > 200)
        assert window.settings.value("view/theme") == "light"
        assert name_plate(window).lightness() > light.lightness() - 10


def test_screenshot_of_the_default_lab(make_window: Callable[..., MainWindow], qtbot: QtBot, screenshots: Path) -> None:
    window = make_window()
    window.resize(1400, 900)
    qtbot.wait(50)
    window.view.fit_to_view()
    window.editor.scene.select_ids(["r1"])
    window.explain_dock.raise_()
    qtbot.wait(100)
    image = window.grab()
    assert image.save(str(screenshots / "screenshot.png"))
    assert image.width() >= 1400 and image.height() >= 900


def test_screenshot_of_vlans_in_the_broadcast_domains_view(make_window: Callable[..., MainWindow], qtbot: QtBot,
                                                          tmp_path: Path, screenshots: Path) -> None:
    """Two switches and a trunk: each link labelled with its VLANs, each VLAN's domain in its colour, the trunk
    striped in both, and s1's ports in the inspector."""
    path = tmp_path / "vlans.vtopo"
    io.save(vlan_lab("ovs"), path)
    window = make_window(path)
    window.resize(1400, 900)
    window.domains.toggle.setChecked(True)
    window.editor.scene.select_ids(["s1"])
    qtbot.waitUntil(lambda: len(window.editor.scene.links["link-trunk"].tints) == 2)
    window.view.fit_to_view()
    qtbot.wait(100)
    assert window.grab().save(str(screenshots / "vlans.png"))


def test_screenshot_of_two_labs_compared(make_window: Callable[..., MainWindow], qtbot: QtBot,
                                         tmp_path: Path, screenshots: Path) -> None:
    """Runs as the teacher's notebook shows them: veth+bridge against macvlan, from each lab's history as
    scripts/measure-screenshot.sh measured it (docs/measure/)."""
    labs, means = {}, []
    for lab in ("bridge-veth", "macvlan-bridge"):
        labs[lab] = tmp_path / f"{lab}.vtopo"
        shutil.copy(TOPOLOGIES / f"{lab}.vtopo", labs[lab])
        recorded = MEASURED / f"{lab}.measure.json"
        save_history(history_path(lab), load_history(recorded))
        means += [(run.mean_bits_per_second or 0) / 1e9 for run in load_history(recorded)]
    window = make_window(labs["bridge-veth"])
    window.files.open_path(labs["macvlan-bridge"])
    window.resize(1400, 900)
    window.measure.show_panel()
    window.measure_panel.history_view.select_rows([0, 1])
    qtbot.wait(50)
    window.view.fit_to_view()
    qtbot.wait(100)
    image = window.grab()
    assert image.save(str(screenshots / "measure.png"))
    assert window.measure_panel.bars.values == pytest.approx(means, rel=0.01)


def test_a_link_is_drawn_again_where_its_load_or_its_selection_changes(make_window: Callable[..., MainWindow],
                                                                     qtbot: QtBot) -> None:
    """Links are drawn by one item for all of them (vtopo.gui.canvas.lines): what changes a link's look must still
    repaint it on screen. Load widens the line, 0 narrows it again, a click draws it in the highlight colour."""
    window = make_window()
    view, scene = window.view, window.editor.scene
    view.reset_zoom()
    link = max(scene.links.values(), key=lambda item: item.line.length())
    middle = link.line.center()
    view.centerOn(middle)
    line = link.line
    across = QPointF(-line.dy(), line.dx()) / line.length() * 4  # beside a plain line, within a loaded one

    def colour(at: QPointF) -> QColor:
        """As the screen shows it: what was painted so far (a grab of the widget would paint it all afresh)."""
        qtbot.wait(30)
        on_screen = view.viewport().mapTo(window, view.mapFromScene(at))
        return QColor(window.screen().grabWindow(window.winId()).toImage().pixel(on_screen))

    def distance(one: QColor, other: QColor) -> int:
        return abs(one.red() - other.red()) + abs(one.green() - other.green()) + abs(one.blue() - other.blue())

    beside = colour(middle + across)
    scene.set_loads({link.link_id: 1.0})
    loaded = colour(middle + across)
    assert distance(loaded, beside) > 60, "the wider line is not drawn"
    scene.set_loads({link.link_id: 0.0})
    assert distance(colour(middle + across), beside) < 10, "the line is still drawn wide"
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.mapFromScene(middle))
    assert scene.selected_link_ids() == [link.link_id]
    assert distance(colour(middle), scene.colors.highlight) < 60, "the selected link is not drawn in the highlight"
