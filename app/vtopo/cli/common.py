"""What every family of commands uses: the agent it asks, the deployed lab as the caller may use it, and how a
family registers its commands. The families import each other never, and this module only."""
from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from vtopo.client.agent_client import AgentClient
    from vtopo.client.in_process import LocalAgent
    from vtopo.deployed import DeployedLab

Command = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]
"""How a family adds a command: command(name, handler, help) -> its parser, for the arguments."""


def run_agent_in_process() -> None:
    """The command line is where the user's side meets root's: for root when no agent listens, the client runs the
    agent's own code in this process, made when a command first needs it."""
    from vtopo.client.in_process import provide

    def agent() -> LocalAgent:
        from vtopo.server.agent_server import Agent

        return Agent()

    provide(agent)


def agent_client() -> AgentClient:
    """The agent every command asks: the one that listens, or, for root when none does, one this process runs (see
    vtopo.client.agent_client.connect). Imported only when a command needs it."""
    from vtopo.client.agent_client import AgentClient

    return AgentClient()


def deployed_for_caller(name: str, action: str = "measure") -> DeployedLab:
    """The lab, as the agent says it is deployed; a member's commands run through it, as the member."""
    from vtopo.client.agent_client import deployed_for

    return deployed_for(name, action, agent_client())


def on_its_site(client: AgentClient, lab: str, node: str, command: list[str]) -> None:
    """When `node` runs on another site, become ssh running `vtopo COMMAND` there, with a pty there when this is a
    terminal; return when it runs here."""
    if site := client.site_of_node(lab, node):
        from vtopo.ssh import ssh_argv

        argv = ssh_argv(site, ["vtopo", *command], terminal=os.isatty(0))
        os.execvp(argv[0], argv)
