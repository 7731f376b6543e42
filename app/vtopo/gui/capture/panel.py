"""The Capture dock and its controller: captures started from the canvas' menus, one tab each, the captured links
marked on the canvas, a clicked packet's hop highlighted, and "follow this ping" along a path."""
from __future__ import annotations

import ipaddress
import subprocess
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal
from PySide6.QtWidgets import QDockWidget, QLabel, QStackedLayout, QTabWidget, QWidget

from vtopo.capture import CaptureError, CaptureTarget, path_targets, resolve
from vtopo.gui.capture.feed import TargetFinder
from vtopo.gui.capture.tab import CaptureTab
from vtopo.gui.canvas.context_menus import ContextMenus, MenuEntries, MenuEntry
from vtopo.gui.panels.deploy import DeployController
from vtopo.gui.document.editor import Editor
from vtopo.gui.measure.controller import find_deployed
from vtopo.gui.workers import Worker
from vtopo.kinds.contract import Role
from vtopo.model.topology import Topology

EMPTY = ("No capture yet. On a deployed lab, right-click a node and choose Capture on…, or select two nodes and "
         "choose Follow a ping.")
PING = ["ping", "-c", "3", "-i", "0.5", "-W", "2"]


class CapturePanel(QWidget):
    tab_closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tabs = QTabWidget(tabsClosable=True, movable=True)
        self.empty = QLabel(EMPTY, wordWrap=True)
        self._stack = QStackedLayout(self)
        self._stack.addWidget(self.empty)
        self._stack.addWidget(self.tabs)
        self.tabs.tabCloseRequested.connect(self.close_tab)

    def add(self, tab: CaptureTab) -> None:
        self.tabs.addTab(tab, tab.title)
        self.tabs.setCurrentWidget(tab)
        self._stack.setCurrentWidget(self.tabs)

    def captures(self) -> list[CaptureTab]:
        return [self.tabs.widget(i) for i in range(self.tabs.count())]  # type: ignore[misc]

    def close_tab(self, index: int) -> None:
        tab = self.tabs.widget(index)
        self.tabs.removeTab(index)
        if isinstance(tab, CaptureTab):
            tab.close_capture()
            tab.deleteLater()
        if not self.tabs.count():
            self._stack.setCurrentWidget(self.empty)
        self.tab_closed.emit()

    def shutdown(self) -> None:
        while self.tabs.count():
            self.close_tab(0)


def _path(lab_name: str, source: str, destination: str) -> tuple[str, str, list[CaptureTarget] | str]:
    """The capture targets along the path (or why there are none), on a pool thread."""
    lab, why = find_deployed(lab_name)
    try:
        if lab is None:
            raise CaptureError(why)
        return source, destination, path_targets(lab.context, source, destination)
    except CaptureError as error:
        return source, destination, str(error)


def _has_ipv6(topology: Topology, node_id: str) -> bool:
    """Whether the node has an IPv6 address that is not link-local, for a ping to aim at."""
    addresses = (a for link in topology.links_of(node_id) for end in link.ends if end.node == node_id
                 for a in end.interface.addresses)
    return any(_ipv6_to_aim_at(a) for a in addresses)


def _ipv6_to_aim_at(address: str) -> bool:
    try:
        ip = ipaddress.ip_interface(address).ip
    except ValueError:
        return False
    return ip.version == 6 and not ip.is_link_local


def _ping(lab_name: str, source: str, destination: str, version: int | None) -> None:
    lab, _why = find_deployed(lab_name)
    if lab is not None:
        address = lab.target_address(source, destination, version)[0]
        subprocess.run(lab.command_in(source, [*PING, address]), capture_output=True, timeout=15)


class CaptureController(QObject):
    def __init__(self, editor: Editor, deploy: DeployController, panel: CapturePanel, dock: QDockWidget,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._editor, self._deploy, self._panel, self._dock = editor, deploy, panel, dock
        self._pool = QThreadPool(self)
        self._workers: set[Worker] = set()
        self._marked: dict[CaptureTab, str] = {}
        panel.tab_closed.connect(self._mark)

    @property
    def available(self) -> bool:
        return bool(self._deploy.deployed_lab)

    def register_menu_entries(self, menus: ContextMenus) -> None:
        """"Capture on" each port of a node (every port of a switch), "Follow a ping" for two selected nodes,
        and "Capture on" each end of a link."""
        menus.add_node_entry(MenuEntries(self._port_entries, submenu="Capture on", section="capture"))
        menus.add_node_entry(MenuEntries(self._follow_entries, section="capture"))
        menus.add_link_entry(MenuEntries(self._link_entries, section="capture"))

    def _enabled(self, _subject_id: str) -> bool:
        return self.available

    def _port_entries(self, node_id: str) -> list[MenuEntry]:
        topology = self._editor.topology
        node = topology.nodes[node_id]
        ports = sorted(end.port for link in topology.links_of(node_id) for end in link.ends if end.node == node_id)
        specs = [f"{node.name}:{port}" for port in ports]
        kind = self._editor.registry.get(node.kind)
        if ports and kind is not None and kind.role is Role.SWITCH:
            specs.insert(0, node.name)
        return [MenuEntry(f"{node.name} (every port)" if spec == node.name else spec, self._starter(spec),
                          self._enabled) for spec in specs]

    def _follow_entries(self, _node_id: str) -> list[MenuEntry]:
        topology, selected = self._editor.topology, self._editor.scene.selected_node_ids()
        if len(selected) != 2:
            return []
        source, destination = (topology.nodes[i].name for i in selected)
        entries = [MenuEntry(f"Follow a ping from {source} to {destination}",
                             lambda _id: self.follow_ping(source, destination), self._enabled)]
        if _has_ipv6(topology, selected[1]):
            entries.append(MenuEntry(f"Follow an IPv6 ping from {source} to {destination}",
                                     lambda _id: self.follow_ping(source, destination, 6), self._enabled))
        return entries

    def _link_entries(self, link_id: str) -> list[MenuEntry]:
        topology = self._editor.topology
        specs = [f"{topology.nodes[end.node].name}:{end.port}" for end in topology.links[link_id].ends]
        return [MenuEntry(f"Capture on {spec}", self._starter(spec), self._enabled) for spec in specs]

    def _starter(self, spec: str) -> Callable[[str], None]:
        def start(_subject_id: str) -> None:
            self.capture(spec)

        return start

    def capture(self, spec: str, bpf: str = "") -> CaptureTab:
        lab = self._deploy.deployed_lab

        def find_target() -> CaptureTarget:
            deployed, why = find_deployed(lab)
            if deployed is None:
                raise CaptureError(why)
            return resolve(deployed.context, spec)

        return self._open(spec, find_target, bpf)

    def follow_ping(self, source: str, destination: str, version: int | None = None) -> None:
        """Capture ICMP (and ICMPv6) on every link of the path, then send three pings, to an address of `version`
        if given: each tab shows the same id and seq, with the TTL (IPv6's hop limit) one lower past each router."""
        lab = self._deploy.deployed_lab
        self._start(Worker(lambda _report: (*_path(lab, source, destination), version)), self._follow)

    def _start(self, worker: Worker, returned: Callable[[Any], None] | None = None) -> None:
        if returned is not None:
            worker.returned.connect(returned)  # a method of this controller: delivered on the GUI thread
        worker.finished.connect(lambda: self._workers.discard(worker))
        self._workers.add(worker)  # kept until its signals are delivered
        worker.start(self._pool)

    def _follow(self, answer: tuple[str, str, list[CaptureTarget] | str, int | None]) -> None:
        source, destination, targets, version = answer
        if isinstance(targets, str):
            self._editor.status_message.emit(f"cannot follow a ping from {source} to {destination}: {targets}")
            return
        tabs = [self._open(f"{index}. {target.label}", _known(target), "icmp or icmp6")
                for index, target in enumerate(targets, 1)]
        waiting = set(tabs)

        def listening(tab: CaptureTab) -> None:
            waiting.discard(tab)
            if not waiting:
                lab = self._deploy.deployed_lab
                self._start(Worker(lambda _report: _ping(lab, source, destination, version)))

        for tab in tabs:
            tab.started.connect(lambda _target, tab=tab: listening(tab))

    def _open(self, title: str, find_target: TargetFinder, bpf: str) -> CaptureTab:
        tab = CaptureTab(title, find_target, bpf)
        tab.started.connect(lambda target, tab=tab: self._mark(tab, target.link_id))
        tab.packet_chosen.connect(self._show_hop)
        self._panel.add(tab)
        self._dock.show()
        self._dock.raise_()
        return tab

    def _mark(self, tab: CaptureTab | None = None, link_id: str | None = None) -> None:
        """The links under capture stand out on the canvas."""
        if tab is not None and link_id:
            self._marked[tab] = link_id
        open_tabs = set(self._panel.captures())
        self._marked = {t: link for t, link in self._marked.items() if t in open_tabs}
        self._editor.scene.highlight_path(self._marked.values(), "capture")

    def _show_hop(self, link_id: str) -> None:
        link = self._editor.topology.links.get(link_id)
        if link is not None:
            self._editor.scene.highlight_path([link_id, link.a.node, link.b.node], "capture")

    def shutdown(self) -> None:
        self._panel.shutdown()
        self._pool.waitForDone()


def _known(target: CaptureTarget) -> TargetFinder:
    return lambda: target
