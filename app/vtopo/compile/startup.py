"""A node's startup commands: allowed only by the user at deploy time, run inside the node once the lab is built (by
the ops the compiler makes last, with `in_node` and `place_of`)."""
from __future__ import annotations

from typing import Any, Iterator

from vtopo.kinds.contract import CannotRunInside, NodeContext, Role
from vtopo.model.problems import ConsentRequest, Problem
from vtopo.model.rules import Place

STARTUP_COMMANDS = "startup commands"
"""ConsentRequest.what for a node's startup commands; its name is the node's."""


def in_node(node: NodeContext[Any], command: str) -> list[str]:
    """The argv that runs `command` inside the node, with its shell."""
    return node.kind.command_in(node, ["sh", "-c", command])


def startup_problems(node: NodeContext[Any], path: str) -> Iterator[Problem]:
    """Commands on a node that has no shell, or that the user did not allow; `path` is the node's in the file."""
    commands, name = node.node.startup_commands, node.node.name
    if not commands:
        return
    try:
        in_node(node, "true")
    except CannotRunInside as why:
        yield Problem(f"startup commands need a shell to run in: {why}", node.subject, path, node.node.id)
        return
    if node.lab.trust.owner.confined and place_of(node) is Place.HOST:
        yield Problem(f"only root may run startup commands on {name}: it is the host's own namespace, so they would "
                      "run on the host itself, outside the lab; remove them, or ask an administrator to deploy the lab",
                      node.subject, path, node.node.id)
        return
    if name in node.lab.trust.startup_commands:
        return
    listed = "; ".join(commands)
    yield Problem(f"the lab file asks to run {len(commands)} startup command(s) inside {name} as the user who deploys "
                  f"it: {listed}. A lab file cannot allow that by itself: pass --allow-commands {name} to vtopo deploy "
                  "(the designer asks)",
                  node.subject, path, node.node.id,
                  consent=ConsentRequest(STARTUP_COMMANDS, name, f"vtopo runs these commands inside {name} as the user "
                                         "who deploys the lab (as root of the lab's own user namespace, unless that "
                                         f"user is root), once the lab is built: {listed}"))


def place_of(node: NodeContext[Any]) -> Place:
    """Where the node's startup commands run."""
    if node.kind.role is Role.MACHINE:
        return Place.GUEST
    return Place.NODE if node.kind.netns(node) else Place.HOST
