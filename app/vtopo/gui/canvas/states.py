"""What the canvas knows about a deployed lab: a state per node, shown as a colored dot."""
from __future__ import annotations

from enum import Enum

from PySide6.QtGui import QColor


class NodeState(str, Enum):
    NOT_DEPLOYED = "not deployed"
    DEPLOYING = "deploying"
    RUNNING = "running"
    DEGRADED = "degraded"  # deployed, but something it made is gone
    INCOMPLETE = "incomplete"  # its deploy was interrupted before all of it was applied
    STOPPED = "stopped"  # deployed, and stopped by the user (vtopo node LAB NODE stop)
    FAILED = "failed"

    @property
    def color(self) -> QColor:
        return QColor({"not deployed": "#9e9e9e", "deploying": "#f0a202", "running": "#2fb344",
                       "degraded": "#e8590c", "incomplete": "#ae3ec9", "stopped": "#4263eb",
                       "failed": "#d63939"}[self.value])

    @classmethod
    def parse(cls, text: str) -> NodeState:
        """Map an executor's state word ("running", "degraded", "failed"...) onto the states the canvas shows."""
        word = text.strip().lower()
        if word in ("running", "up", "deployed", "ok"):
            return cls.RUNNING
        if word in ("deploying", "starting", "applying", "destroying"):
            return cls.DEPLOYING
        if word == "degraded":
            return cls.DEGRADED
        if word == "incomplete":
            return cls.INCOMPLETE
        if word == "stopped":
            return cls.STOPPED
        if word in ("failed", "error", "crashed", "dead", "unreachable"):  # unreachable: its site does not answer
            return cls.FAILED
        return cls.NOT_DEPLOYED


def legend_html() -> str:
    """One line naming the colour of each state, for the status bar."""
    return "&nbsp;&nbsp;".join(f'<span style="color:{state.color.name()}">●</span>&nbsp;{state.value}'
                               for state in (NodeState.RUNNING, NodeState.STOPPED, NodeState.DEPLOYING,
                                             NodeState.DEGRADED, NodeState.INCOMPLETE, NodeState.FAILED,
                                             NodeState.NOT_DEPLOYED)) + \
        '&nbsp;&nbsp;<span style="color:#d63939">╌</span>&nbsp;link down'


LINK_DOWN_COLOR = QColor("#d63939")


SEVERITY_COLORS = {"error": QColor("#d63939"), "warning": QColor("#f08c00")}
