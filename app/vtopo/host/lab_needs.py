"""What a lab takes from the host that the host lacks: lower devices, files, and what the host's programs accept in
its nodes' configurations. It reads only, so `vtopo validate` asks it too, and it loads no op's class: validating a
lab lowers it only where lowering tells more (vtopo.lab.validated)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from vtopo.host.config_checks import lab_config_problems
from vtopo.kinds.contract import LabContext, RunsMachine
from vtopo.model.problems import Problem

if TYPE_CHECKING:
    from vtopo.compile.plan import Plan


def missing_on_host(plan: Plan | None, context: LabContext, host_links: set[str],
                    refused: frozenset[str] = frozenset()) -> list[Problem]:
    """What the lab takes from the host whose interfaces are `host_links` that is not there: lower devices (of a
    `plan`, when the lab compiled) and files (VM images, guest kernels); and what the host's programs refuse in the
    configurations of its nodes, but those `refused` (by id): a text the node's own check refused (a line that opens a
    file) never reaches the program. Reads only, so `vtopo validate` can ask it too."""
    problems = _missing_lower_devices(plan, host_links) if plan is not None else []
    paths = {node_id: f"$.nodes[{index}]" for index, node_id in enumerate(context.topology.nodes)}
    problems += lab_config_problems((node, paths[node.node.id]) for node in context.nodes.values()
                                    if node.node.id not in refused)
    for node in context.nodes.values():
        for path in node.kind.host_files(node) if isinstance(node.kind, RunsMachine) else ():
            if not Path(path).is_file():
                problems.append(Problem(f"{path} does not exist on the host (or is not a file)", node.subject,
                                        subject_id=node.node.id))
    return problems


def _missing_lower_devices(plan: Plan, host_links: set[str]) -> list[Problem]:
    """The lower devices of the plan's macvlans and macvtaps that neither the host has nor an earlier step makes."""
    from vtopo import ops as o  # loaded with the plan, whose steps are ops

    made: set[str] = set()
    problems = []
    for op in plan.ops:
        if isinstance(op, (o.CreateMacvlan, o.CreateMacvtap)) and op.lower not in made | host_links:
            problems.append(Problem(f"the lower device {op.lower} does not exist on the host; pick one that `ip link` "
                                    "lists", op.owner))
        made |= {name for name in (getattr(op, "name", None), getattr(op, "peer", None)) if name}
    return problems
