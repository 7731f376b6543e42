"""Operating the running lab from the canvas: Start, Stop and Restart in a node's menu, Take down and Bring up in a
link's, and a running link's impairment, edited in the inspector, applied at once without a redeploy.

The work is the agent's (the same requests as `vtopo node` and `vtopo link`; in a lab spread over sites, the agent of
each site a node or link is on), run in a worker; the canvas draws stopped nodes and down links as the agents tell of
the change (the lab's following: vtopo.gui.panels.deploy), with no status read.
"""
from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, Signal

from vtopo.gui.canvas.states import NodeState
from vtopo.gui.canvas.context_menus import ContextMenus, MenuEntry
from vtopo.gui.document.editor import Editor
from vtopo.gui.panels.deploy import DeployController, DeployLog
from vtopo.gui.workers import Worker
from vtopo.kinds.contract import Role
from vtopo.model.impairment_change import ImpairmentChange
from vtopo.model.topology import Link
from vtopo.protocol import NodeAction

if TYPE_CHECKING:
    from vtopo.sites.spread_operations import SitesOperator

STOPPABLE_ROLES = (Role.NAMESPACE, Role.MACHINE)


def lab_operator() -> SitesOperator:
    """The agents (this machine's, and those of the sites a lab is spread over): they operate the labs of the user
    who runs the designer."""
    from vtopo.sites.spread_operations import SitesOperator

    return SitesOperator()


class OperateController(QObject):
    message = Signal(str)  # what was done or what failed, for the status bar

    def __init__(self, editor: Editor, deploy: DeployController, menus: ContextMenus, log: DeployLog,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self._deploy = deploy
        self._log = log
        self._pool = deploy.pool
        self._running = 0
        for text, action, enabled in (("Start", NodeAction.START, self._can_start),
                                      ("Stop", NodeAction.STOP, self._can_stop),
                                      ("Restart", NodeAction.RESTART, self._can_stop)):
            menus.add_node_entry(MenuEntry(text, partial(self.operate_node, action), enabled, section="operate"))
        menus.add_link_entry(MenuEntry("Take link down", partial(self.set_link_state, False),
                                       partial(self._link_can_be, False), section="operate"))
        menus.add_link_entry(MenuEntry("Bring link up", partial(self.set_link_state, True),
                                       partial(self._link_can_be, True), section="operate"))
        self._topology = editor.topology
        self._topology.events.link_changed.connect(self._link_changed)
        editor.topology_replaced.connect(self._follow_topology)

    @property
    def busy(self) -> bool:
        return self._running > 0

    def wait(self, timeout_ms: int = 60_000) -> None:
        self._pool.waitForDone(timeout_ms)

    # ------------------------------------------------------------ what the menus offer

    def _can_stop(self, node_id: str) -> bool:
        return self._stoppable(node_id) and self._state(node_id) is NodeState.RUNNING

    def _can_start(self, node_id: str) -> bool:
        return self._stoppable(node_id) and self._state(node_id) is NodeState.STOPPED

    def _stoppable(self, node_id: str) -> bool:
        kind = self._editor.registry.get(self._editor.topology.nodes[node_id].kind)
        return bool(self._deploy.deployed_lab) and kind is not None and kind.role in STOPPABLE_ROLES

    def _state(self, node_id: str) -> NodeState:
        return self._deploy.state_of(self._editor.topology.nodes[node_id].name)

    def _link_can_be(self, up: bool, link_id: str) -> bool:
        return bool(self._deploy.deployed_lab) and (link_id in self._deploy.links_down) == up

    # ------------------------------------------------------------ actions

    def operate_node(self, action: NodeAction, node_id: str) -> None:
        lab, node = self._deploy.deployed_lab, self._editor.topology.nodes[node_id].name
        self._run(f"{action} {node}", lambda operate: operate.operate_node(lab, node, action))

    def set_link_state(self, up: bool, link_id: str) -> None:
        lab, (a, b) = self._deploy.deployed_lab, self._ends(self._editor.topology.links[link_id])
        self._run(f"take link {a}-{b} {'up' if up else 'down'}",
                  lambda operate: operate.set_link_state(lab, a, b, up=up))

    def _link_changed(self, link: Link) -> None:
        """An edit of a running link's impairment (in the inspector, or its undo) is applied to the lab at once."""
        running = self._deploy.deployed_impairment(link.id)
        if running is None or running == link.impairment:
            return
        lab, (a, b), new = self._deploy.deployed_lab, self._ends(link), link.impairment
        self._run(f"change the impairment of link {a}-{b}",
                  lambda operate: operate.set_link_impairment(lab, a, b, ImpairmentChange.to(new)))

    def _ends(self, link: Link) -> tuple[str, str]:
        nodes = self._editor.topology.nodes
        a, b = (f"{nodes[end.node].name}:{end.port}" for end in link.ends)
        return a, b

    def _run(self, what: str, job: Callable[[SitesOperator], str]) -> None:
        self._log.log(f"{what} on the running lab")
        worker = Worker(lambda _report: job(lab_operator()))
        worker.returned.connect(self._done)
        worker.errored.connect(lambda error: self._failed(what, error))
        worker.finished.connect(self._finished)
        self._running += 1
        worker.start(self._pool)

    def _done(self, summary: str) -> None:
        """The first line says what was done; any after it are what the node's startup commands printed."""
        for line in summary.splitlines():
            self._log.log(line)
        self.message.emit(summary.splitlines()[0])

    def _failed(self, what: str, error: Exception) -> None:
        text = f"could not {what}: {error}"
        self._log.log(f"FAILED: {text}")
        self.message.emit(text)

    def _finished(self) -> None:
        self._running -= 1

    def _follow_topology(self) -> None:
        self._topology.events.link_changed.disconnect(self._link_changed)
        self._topology = self._editor.topology
        self._topology.events.link_changed.connect(self._link_changed)
