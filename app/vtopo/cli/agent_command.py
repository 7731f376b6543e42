"""`vtopo agent`: the privileged agent, in the foreground or as a daemon."""
from __future__ import annotations

import argparse
import os
from pathlib import Path

from vtopo.cli.common import Command

AGENT_HELP = ("run the privileged agent that deploys labs for root and the members of the vtopo group, on "
              "/run/vtopo/agent.sock (the other commands use it whenever it runs)")
AGENT_NOTE = ("Deploy, destroy, status, cleanup, exec, console, ping, iperf, rr, check, capture and experiment "
                   "ask the vtopo agent (`vtopo agent`), as the calling user. When none runs, root's commands run one "
                   "in their own process.")


def add_commands(command: Command) -> None:
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
    from vtopo import protocol
    from vtopo.server.agent_server import run

    if args.stdio:
        from vtopo.sites.relay import relay_stdio

        return relay_stdio(protocol.SOCKET)
    if os.geteuid() != 0:
        print("vtopo agent: the agent changes the host's networking and must run as root "
              "(`sudo vtopo agent --daemon`)")
        return 1
    from vtopo.server.policy import CONFIG

    return run(protocol.SOCKET, args.daemon, args.pid_file or protocol.PID_FILE, policy=args.config or CONFIG)
