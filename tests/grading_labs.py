"""An assignment built from the shipped ospf-ring lab, and students' submissions of it: a correct one, a wrong one
(r1 puts its link to r3 in area 1, so that link never forms an adjacency and the routes take the long way round, while
the submission's own checks are all ones that pass), and an unparsable one."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vtopo.resources import TOPOLOGIES

ASSIGNMENT = TOPOLOGIES / "ospf-ring.vtopo"
CHECKS = [check["name"] for check in json.loads(ASSIGNMENT.read_text())["checks"]]
FAILED_IN_THE_WRONG_ONE = {"r1 learned lan3 by OSPF", "r3 learned lan1 by OSPF", "r1 is adjacent to r3",
                           "h1 to h3 crosses r1 and r3"}
ALWAYS_TRUE = [{"name": name, "type": "reach", "source": "h1", "destination": "h1"} for name in CHECKS]
"""What a wrong submission claims as its checks: each of the assignment's names, on h1 reaching itself."""


def submission(area_of_r1_r3: int = 0, checks: list[dict[str, Any]] | None = None) -> str:
    document = json.loads(ASSIGNMENT.read_text())
    r1 = next(node for node in document["nodes"] if node["name"] == "r1")
    r1["settings"]["config"] = r1["settings"]["config"].replace("network 10.0.13.0/30 area 0",
                                                                f"network 10.0.13.0/30 area {area_of_r1_r3}")
    if checks is not None:
        document["checks"] = checks
    return json.dumps(document, indent=1)


def write_submissions(directory: Path) -> dict[str, Path]:
    """alice's correct submission, bob's wrong one and carol's unparsable one, readable by every user."""
    texts = {"alice": submission(), "bob": submission(area_of_r1_r3=1, checks=ALWAYS_TRUE),
             "carol": '{"format": "vtopo", "version": 2, "nodes": [{"name": '}
    paths = {}
    for student, text in texts.items():
        paths[student] = directory / f"{student}.vtopo"
        paths[student].write_text(text)
        paths[student].chmod(0o644)
    return paths
