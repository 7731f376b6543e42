"""The tools an experiment's tests may use, and the validation of a lab's experiment section."""
from __future__ import annotations

import dataclasses
from typing import Any

from vtopo.model.expectations import Experiment, cell_name
from vtopo.model.problems import Problem
from vtopo.model.topology import Topology

TOOLS = ("iperf", "ping", "rr", "reconvergence")
UNITS = {"iperf": "Mbit/s", "ping": "ms", "rr": "transactions/s", "reconvergence": "s"}
NOT_FROM_A_FILE = {"python"}  # the interpreter run as root inside nodes is vtopo's choice, never a lab file's


def options_of(tool: str, raw: dict[str, Any]) -> tuple[Any, list[tuple[str, str]]]:
    """The typed options of a test, or (field, message) for each thing wrong with them."""
    from vtopo.experiment.reconvergence import ReconvergenceOptions  # the measure layer loads only to run a test
    from vtopo.measure import IperfOptions, PingOptions, RROptions

    options_type: type = {"iperf": IperfOptions, "ping": PingOptions, "rr": RROptions,
                          "reconvergence": ReconvergenceOptions}[tool]
    fields = {f.name: f for f in dataclasses.fields(options_type) if f.name not in NOT_FROM_A_FILE}
    wrong = [(key, f"{tool} has no option {key!r} (it has: {', '.join(fields)})") for key in raw if key not in fields]
    for key, value in raw.items():
        if key in fields:
            default = fields[key].default
            expected = str if default is None else type(default)
            ok = isinstance(value, expected) or (expected is float and isinstance(value, int))
            if not ok or (isinstance(value, bool) and expected is not bool):
                wrong.append((key, f"{key} must be {'a number' if expected in (int, float) else expected.__name__}"))
    if wrong:
        return None, wrong
    options = options_type(**raw)
    problems = options.problems()
    return (None, [("options", p) for p in problems]) if problems else (options, [])


def experiment_problems(topology: Topology) -> list[Problem]:
    experiment: Experiment = topology.experiment
    problems = []
    for index, pair in enumerate(experiment.pairs):
        for field in ("source", "destination"):
            name = getattr(pair, field)
            if topology.node_named(name) is None:
                problems.append(Problem(f"{field} names node {name!r}, which is not in the lab", f"pair {pair.name}",
                                        f"$.experiment.pairs[{index}].{field}"))
    for index, test in enumerate(experiment.tests):
        path = f"$.experiment.tests[{index}]"
        if test.tool not in TOOLS:
            problems.append(Problem(f"tool must be one of {', '.join(TOOLS)}, not {test.tool!r}", f"test {test.name}",
                                    f"{path}.tool"))
            continue
        options, wrong = options_of(test.tool, test.options)
        for field, message in wrong:
            problems.append(Problem(message, f"test {test.name}", f"{path}.options.{field}".replace(".options.options",
                                                                                                  ".options")))
        for end in options.ends if test.tool == "reconvergence" and options is not None else ():
            if topology.node_named(end.partition(":")[0]) is None:
                problems.append(Problem(f"link names node {end.partition(':')[0]!r}, which is not in the lab",
                                        f"test {test.name}", f"{path}.options.link"))
    cells = {cell_name(pair, test) for pair, test in experiment.cells()}
    for index, comparison in enumerate(experiment.comparisons):
        for field in ("cell", "versus"):
            cell = getattr(comparison, field)
            if cell not in cells:
                problems.append(Problem(f"{field} {cell!r} is not a cell of the matrix (PAIR/TEST: "
                                        f"{', '.join(sorted(cells)) or 'none'})", f"comparison {comparison.name}",
                                        f"$.experiment.comparisons[{index}].{field}"))
    return problems
