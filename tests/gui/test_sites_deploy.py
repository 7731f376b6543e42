"""The designer deploys a lab spread over sites: it asks which other machines vtopo may connect to (none ticked), a
site left unticked stops the deploy and says why, an edit of a running spread lab is refused with what to do, and the
lab's state is each site's own part of it."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QPushButton
from pytestqt.qtbot import QtBot

from spread_labs import here
from tests.gui.helpers import click, deploy_with_f5, drag, when_open
from vtopo.gui.canvas.states import NodeState
from vtopo.gui.main_window import MainWindow
from vtopo.gui.sites_deployer import merged
from vtopo.model import io
from vtopo.model.sites import Site
from vtopo.model.topology import Topology
from vtopo.reports import DeployReport, LabStatus, PartState
from vtopo.resources import TOPOLOGIES
from vtopo.sites.spread import SiteStatus

B = Site("b", "alice@198.18.0.2", port=2222, identity="/keys/b", known_hosts="/keys/known_hosts_b")
R2_SIDE = ("r2", "lan2", "h3")


def split_teaching_lab(site: Site = B) -> Topology:
    """The teaching lab with r1's side (lan1, h1, h2, r1) here and r2's side (r2, lan2, h3) on `site`."""
    topology = io.load(TOPOLOGIES / "l2-vs-l3.vtopo")
    topology.sites = {"here": here(), site.name: site}
    for name in R2_SIDE:
        topology.nodes[name].site = site.name
    return topology


def saved(topology: Topology, directory: Path) -> Path:
    path = directory / f"{topology.name}.vtopo"
    io.save(topology, path)
    return path


class RecordingDeployer:
    """Follows the Deployer API: remembers each deploy, and reports the lab as running once deployed."""

    def __init__(self) -> None:
        self.deployed: list[Any] = []

    def update(self, topology: Any, progress: Callable[[Any], None], consent: Any = None) -> DeployReport:
        self.deployed.append(topology.copy())
        return DeployReport(topology.name, "vtfake", len(topology.nodes), len(topology.links), 1, 0.1)

    def status(self, lab: str | None = None) -> list[LabStatus]:
        return [LabStatus(t.name, "vtfake", "", 0, "running", [PartState(n.name, "running") for n in t.nodes.values()],
                          [], io.to_document(t)) for t in self.deployed[-1:]]

    def labs(self) -> list[Any]:
        return []


def answer_sites(qtbot: QtBot, tick: list[str], button: str, seen: list[tuple[str, bool]]) -> None:
    """Once the sites dialog is open: note each site's line and whether it is ticked, tick those in `tick` with the
    mouse, and press `button`."""
    def answer(dialog: QDialog) -> None:
        assert dialog.objectName() == "consent-sites"
        for box in dialog.findChildren(QCheckBox):
            seen.append((box.text(), box.isChecked()))
            if any(box.text().startswith(f"site {name}:") for name in tick):
                qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
        buttons = dialog.findChild(QDialogButtonBox)
        pressed = next(b for b in buttons.findChildren(QPushButton) if b.text() == button)
        qtbot.mouseClick(pressed, Qt.MouseButton.LeftButton)

    when_open(QDialog, answer)


def test_deploy_lists_the_other_site_unticked_and_an_unticked_site_stops_it(
        make_window: Callable[..., MainWindow], qtbot: QtBot, tmp_path: Path) -> None:
    deployer = RecordingDeployer()
    window = make_window(saved(split_teaching_lab(), tmp_path), deployer_loader=lambda: (deployer, ""))
    qtbot.waitUntil(lambda: not window.deploy.busy)
    assert window.menu_actions.deploy.isEnabled(), window.analyzer.latest
    seen: list[tuple[str, bool]] = []

    answer_sites(qtbot, [], "Deploy", seen)
    deploy_with_f5(qtbot, window)
    what = "alice@198.18.0.2 port 2222 (identity /keys/b, known hosts /keys/known_hosts_b)"
    assert seen == [(f"site b: {what}", False)]
    assert deployer.deployed == []
    assert (f"not deployed: site b: the lab would have vtopo connect to {what}; allow it by ticking site b when "
            "Deploy asks") in window.log.toPlainText()
    assert window.statusBar().currentMessage().startswith("not deployed: site b:")
    assert all(item.state is NodeState.NOT_DEPLOYED for item in window.editor.scene.nodes.values())

    answer_sites(qtbot, [], "Cancel", seen)
    deploy_with_f5(qtbot, window)
    assert deployer.deployed == [] and len(seen) == 2

    answer_sites(qtbot, ["b"], "Deploy", seen)
    deploy_with_f5(qtbot, window)
    qtbot.waitUntil(lambda: not window.deploy.busy and deployer.deployed != [])
    assert [node.site for node in deployer.deployed[0].nodes.values() if node.name in R2_SIDE] == ["b"] * 3
    assert "deploying lab l2-vs-l3 (7 nodes, 6 links) here and on site b" in window.log.toPlainText()
    qtbot.waitUntil(lambda: window.deploy.state_of("h3") is NodeState.RUNNING)


def test_an_edit_of_a_running_spread_lab_is_refused_with_what_to_do(
        make_window: Callable[..., MainWindow], qtbot: QtBot, tmp_path: Path) -> None:
    deployer = RecordingDeployer()
    deployer.deployed.append(split_teaching_lab())  # running as the file says
    window = make_window(saved(split_teaching_lab(), tmp_path), deployer_loader=lambda: (deployer, ""))
    qtbot.waitUntil(lambda: window.deploy.deployed_lab == "l2-vs-l3" and not window.deploy.busy)
    view, h3 = window.view, window.editor.scene.nodes["h3"]
    drag(view, h3.pos(), h3.pos() + QPointF(60, 0))  # only the drawing changes: the sites have nothing to redo
    assert window.editor.topology.nodes["h3"].position.x > 850
    assert window.drift.text() == ""

    click(view, h3.pos())
    site = window.inspector.node_form.site
    qtbot.waitUntil(lambda: site.isVisible() and window.inspector.node_form.node_id == "h3")
    site.setFocus()
    qtbot.keyClick(site, Qt.Key.Key_Up)  # h3 comes here: the sites' parts would change
    assert window.editor.topology.nodes["h3"].site == ""
    assert window.drift.text() == "lab l2-vs-l3 runs over sites and has changed since: destroy it and deploy it again"
    deploy_with_f5(qtbot, window)  # refused before any question: no dialog opens
    assert len(deployer.deployed) == 1
    assert window.statusBar().currentMessage() == (
        "not deployed: lab l2-vs-l3 is spread over sites, and a running lab spread over sites cannot be changed in "
        "place yet: destroy it and deploy it again")


def test_a_spread_labs_state_is_each_sites_own_part_and_an_unreachable_site_is_named() -> None:
    topology = split_teaching_lab()
    names = {link.id: topology.describe_link(link) for link in topology.links.values()}
    tunnel, lan2 = names["r1-eth1--r2-eth1"], names["h3-eth0--lan2-p2"]

    def lab(state: str, nodes: dict[str, str], links: dict[str, str]) -> LabStatus:
        """The lab as one site sees it: every node and link, running unless said otherwise."""
        return LabStatus("l2-vs-l3", "v1234", "", 0, state,
                         [PartState(n.name, nodes.get(n.name, "running")) for n in topology.nodes.values()],
                         [PartState(name, links.get(name, "running")) for name in names.values()],
                         io.to_document(topology))

    here_ = lab("running", {}, {})
    b = SiteStatus("b", [lab("degraded", {"h3": "degraded"}, {lan2: "degraded", tunnel: "degraded"})])
    seen = merged(topology, here_, [b])
    assert {part.name: part.state for part in seen.nodes} == {"lan1": "running", "lan2": "running", "r1": "running",
                                                               "r2": "running", "h1": "running", "h2": "running",
                                                               "h3": "degraded"}
    assert {part.name: part.state for part in seen.links if part.state != "running"} == {lan2: "degraded",
                                                                                         tunnel: "degraded"}
    assert seen.state == "site b: degraded" and not seen.up

    refused = "ssh: connect to host 198.18.0.2 port 2222: Connection refused"
    seen = merged(topology, lab("running", {}, {}), [SiteStatus("b", [], refused)])
    unreachable = {part.name: part.detail for part in seen.nodes + seen.links if part.state == "unreachable"}
    assert set(unreachable) == {"r2", "lan2", "h3", tunnel, lan2, names["r2-eth0--lan2-p1"]}
    assert unreachable["h3"] == f"; site b cannot be reached: {refused}"
    assert seen.state == f"site b: {refused}"
    assert NodeState.parse("unreachable") is NodeState.FAILED

    gone = merged(topology, lab("running", {}, {}), [SiteStatus("b", [])])
    assert gone.state == "site b: its part is not deployed"
    assert {p.name: p.detail for p in gone.nodes if p.state == "degraded"}["r2"] == "; site b has no part of the lab"
    deploying = lab("deploying", {}, {})
    assert merged(topology, deploying, [SiteStatus("b", [], refused)]).state == "deploying"  # the agent's job shows
