"""What the enabled-when rules of the actions read: the designer's state, gathered once each time it may have
changed (the selection, a deploy starting or ending, a check of the lab, a node's state)."""
from __future__ import annotations

from dataclasses import dataclass

from vtopo.gui.actions.designer import Designer
from vtopo.gui.canvas.states import NodeState
from vtopo.gui.console import terminal
from vtopo.gui.panels import consent


@dataclass(frozen=True)
class Context:
    selected: bool  # anything on the canvas
    movable: bool  # nodes or notes among the selection
    node: str  # the one selected node's id, or ""
    pair_measurable: bool  # two nodes selected, both able to run iperf3
    deployer: bool  # a deployer is at hand (the agent answers)
    unavailable: str  # why Deploy is unavailable, when it is
    busy: bool  # this window runs a deploy job
    agent_doing: str  # what the agent does to the lab for another client
    deploying: bool
    deployed_lab: str
    errors: bool  # the latest check found errors that block a deploy
    waiting: bool  # a deploy waits for the check of the lab
    terminal_reason: str  # why no terminal opens on the selection in the Terminal panel, or ""
    external_reason: str  # why no terminal window opens on it, or ""
    recent: bool  # files were opened before

    @property
    def idle(self) -> bool:
        """Deploy jobs may start: a deployer is at hand, and neither this window nor the agent runs one."""
        return self.deployer and not self.busy and not self.agent_doing


def context_of(designer: Designer) -> Context:
    parts = designer.parts
    editor, deploy, scene = parts.editor, parts.deploy, parts.editor.scene
    node_id = designer.selected_node()
    if not node_id:
        reason = external_reason = "select one node"
    else:
        kind = editor.registry.get(editor.topology.nodes[node_id].kind)
        running = deploy.state_of(editor.topology.nodes[node_id].name) is NodeState.RUNNING
        reason = terminal.unavailable_reason(kind, running)
        external_reason = terminal.external_unavailable_reason(kind, running)
    pair = scene.selected_node_ids()
    analysis = parts.analyzer.latest
    return Context(
        selected=bool(scene.selectedItems()),
        movable=bool(pair or scene.selected_annotation_ids()),
        node=node_id,
        pair_measurable=len(pair) == 2 and all(parts.measure.can_measure(one) for one in pair),
        deployer=deploy.deployer() is not None,
        unavailable=deploy.unavailable,
        busy=deploy.busy,
        agent_doing=deploy.agent_doing,
        deploying=deploy.deploying,
        deployed_lab=deploy.deployed_lab,
        errors=bool(analysis is not None and consent.blocking(analysis.errors())),
        waiting=designer.deploy_request.waiting,
        terminal_reason=reason,
        external_reason=external_reason,
        recent=bool(parts.files.recent()),
    )
