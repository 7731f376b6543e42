"""What the canvas's view and tools ask of the editor that owns the scene (vtopo.gui.document.editor.Editor).

The editor builds the scene, so the canvas names the editor by this Protocol rather than importing it: the two
folders then depend one way only.
"""
from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QPointF, SignalInstance

from vtopo.gui.canvas.scene import TopologyScene
from vtopo.kinds.registry import Registry
from vtopo.model.topology import Link, Node, Topology


class CanvasEditor(Protocol):
    @property
    def scene(self) -> TopologyScene: ...

    @property
    def topology(self) -> Topology: ...

    @property
    def registry(self) -> Registry: ...

    @property
    def status_message(self) -> SignalInstance: ...  # one line for the status bar

    def place_node(self, kind_name: str, at: QPointF) -> Node | None: ...

    def free_ports(self, node_id: str, count: int = ...) -> list[str]: ...

    def can_connect(self, a_id: str, b_id: str) -> str: ...

    def connect_nodes(self, a_id: str, b_id: str, a_port: str | None = ..., b_port: str | None = ...) -> Link | None:
        ...

    def rename_node(self, node_id: str, name: str) -> str: ...

    def commit_moves(self) -> bool: ...

    def nudge(self, dx: float, dy: float) -> None: ...
