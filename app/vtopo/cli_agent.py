"""`vtopo agent`, and how the other commands decide between the agent and applying plans in their own process."""
from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from vtopo.agent.client import AgentClient

AGENT_HELP = ("run the privileged agent that deploys labs for root and the members of the vtopo group, on "
              "/run/vtopo/agent.sock (the other commands use it whenever it runs)")
IN_PROCESS_NOTE = ("When the vtopo agent runs (`vtopo agent`), deploy, destroy, status, cleanup, exec, console, ping, "
                   "iperf, rr, check and experiment ask it, as the calling user, and so does capture for a user who "
                   "is not root. Without an agent, root applies plans in its own process.")


def add_commands(command: Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]) -> None:
    sub = command("agent", cmd_agent, AGENT_HELP)
    sub.add_argument("--daemon", action="store_true", help="detach, and write the agent's pid to --pid-file "
                     "(for machines without systemd; there the socket unit starts it)")
    sub.add_argument("--pid-file", type=Path, help="where --daemon writes the pid (default /run/vtopo/agent.pid)")
    sub.add_argument("--stdio", action="store_true", help="serve one connection to the running agent on stdin and "
                     "stdout, as the calling user: what another site runs over ssh (docs/sites.md)")
    sub.add_argument("--config", type=Path, help="what members of the vtopo group may allow beyond root's labs (host "
                     "devices and image directories) and how much one member may take (connections, labs, nodes, VM "
                     "memory): default /etc/vtopo/agent.toml; see docs/security.md")


def cmd_agent(args: argparse.Namespace) -> int:
    from vtopo.agent import protocol
    from vtopo.agent.server import run

    if args.stdio:
        from vtopo.sites.relay import relay_stdio

        return relay_stdio(protocol.SOCKET)
    if os.geteuid() != 0:
        print("vtopo agent: the agent changes the host's networking and must run as root "
              "(`sudo vtopo agent --daemon`)")
        return 1
    from vtopo.agent.policy import CONFIG

    return run(protocol.SOCKET, args.daemon, args.pid_file or protocol.PID_FILE, policy=args.config or CONFIG)


def agent_client() -> AgentClient | None:
    """The agent to ask, or None when this process applies plans itself: root, with no agent running. Anyone else
    without an agent gets AgentUnavailable, saying how to start one."""
    from vtopo.agent.client import AgentClient, AgentUnavailable, agent_running

    if agent_running():
        return AgentClient()
    if os.geteuid() == 0:
        return None
    raise AgentUnavailable("no vtopo agent is running, and only root can deploy without one; start it with "
                           "`sudo vtopo agent --daemon` (or `make run`)")

