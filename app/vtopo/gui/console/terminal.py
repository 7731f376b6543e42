"""A terminal on a deployed node runs `vtopo exec` (a shell, or vtysh on a router), or `vtopo console` for a VM's
serial console: in the designer's terminal dock, or in x-terminal-emulator (or $TERMINAL, or xterm)."""
from __future__ import annotations

import os
import shutil
import sys
from typing import Any

from PySide6.QtCore import QProcess

from vtopo.kinds.contract import NodeKind, Role


def terminal_emulator() -> list[str] | None:
    """The argv prefix of the user's terminal emulator, or None when there is none."""
    for candidate in (os.environ.get("TERMINAL", ""), "x-terminal-emulator", "xterm"):
        if candidate and (path := shutil.which(candidate)):
            return [path]
    return None


def shell_for(kind: NodeKind[Any] | None) -> list[str]:
    """The kind's shell (vtysh on a router), or a bash."""
    return list(kind.shell) if kind is not None else ["bash"]


def unavailable_reason(kind: NodeKind | None, deployed: bool) -> str:
    """Why a node's terminal cannot open, or ""."""
    if kind is None:
        return "the node's kind is not installed"
    if kind.role not in (Role.NAMESPACE, Role.MACHINE):
        return f"a {kind.label} has no shell of its own (containers, routers, the host and VMs do)"
    if not deployed:
        return "deploy the lab first: the node is not running"
    return ""


def external_unavailable_reason(kind: NodeKind | None, deployed: bool) -> str:
    """Why a node's terminal cannot open in a terminal emulator of its own, or ""."""
    if reason := unavailable_reason(kind, deployed):
        return reason
    if terminal_emulator() is None:
        return "no terminal emulator found: set $TERMINAL or install xterm"
    return ""


def node_argv(lab: str, node_name: str, kind: NodeKind | None) -> list[str]:
    """The program a terminal on the node runs: the node's shell, or a VM's serial console."""
    if kind is not None and kind.role is Role.MACHINE:
        inside = ["console", lab, node_name]
    else:
        inside = ["exec", lab, node_name, "--", *shell_for(kind)]
    return [sys.executable, "-m", "vtopo", *inside]


def terminal_argv(lab: str, node_name: str, kind: NodeKind | None) -> list[str]:
    emulator = terminal_emulator() or ["xterm"]
    return [*emulator, "-T", f"{lab}: {node_name}", "-e", *node_argv(lab, node_name, kind)]


def open_terminal(lab: str, node_name: str, kind: NodeKind | None) -> bool:
    program, *args = terminal_argv(lab, node_name, kind)
    started, _pid = QProcess.startDetached(program, args)
    return bool(started)
