"""`vtopo agent`, and the agent the other commands ask."""
from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from vtopo.agent.client import AgentClient

AGENT_HELP = ("run the privileged agent that deploys labs for root and the members of the vtopo group, on "
              "/run/vtopo/agent.sock (the other commands use it whenever it runs)")
IN_PROCESS_NOTE = ("Deploy, destroy, status, cleanup, exec, console, ping, iperf, rr, check, capture and experiment "
                   "ask the vtopo agent (`vtopo agent`), as the calling user. When none runs, root's commands run one "
                   "in their own process.")


def add_commands(command: Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]) -> None:
    sub = command("agent", cmd_agent, AGENT_HELP)
    sub.add_argument("--daemon", action="store_true", help="detach, and write the agent's pid to --pid-file "
                     "(for machines without systemd; there the socket unit starts it)")
    sub.add_argument("--pid-file", type=Path, help="where --daemon writes the pid (default /run/vtopo/agent.pid)")
    sub.add_argument("--config", type=Path, help="what members of the vtopo group may allow beyond root's labs (host "
                     "devices and image directories) and how much one member may take (connections, labs, nodes, VM "
                     "memory): default /etc/vtopo/agent.toml; see docs/security.md")


def cmd_agent(args: argparse.Namespace) -> int:
    from vtopo.agent import protocol
    from vtopo.agent.server import run

    if os.geteuid() != 0:
        print("vtopo agent: the agent changes the host's networking and must run as root "
              "(`sudo vtopo agent --daemon`)")
        return 1
    from vtopo.agent.policy import CONFIG

    return run(protocol.SOCKET, args.daemon, args.pid_file or protocol.PID_FILE, policy=args.config or CONFIG)


def agent_client() -> AgentClient:
    """The agent every command asks: the one that listens, or, for root when none does, one this process runs (see
    vtopo.agent.client.connect). Imported only when a command needs it."""
    from vtopo.agent.client import AgentClient

    return AgentClient()
