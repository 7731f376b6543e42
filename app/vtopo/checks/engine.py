"""Running a lab's checks: the independent ones side by side, the ones that load the lab alone afterwards."""
from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from vtopo.checks.spec import TypedCheck
from vtopo.kinds.check_types import Probe, Verdict
from vtopo.measure.nodes import MeasureError

PARALLEL_CHECKS = 16


@dataclass(frozen=True)
class Outcome:
    check: TypedCheck
    verdict: Verdict
    seconds: float

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.check.check.name, "type": self.check.type.name, "passed": self.passed,
                "why": self.verdict.why, "explain": self.check.explanation, "nodes": self.check.nodes(),
                "seconds": round(self.seconds, 3)}


def judge(check: TypedCheck, probe: Probe) -> Outcome:
    """One check; a probe that cannot answer fails the check with its reason instead of raising."""
    started = time.monotonic()
    try:
        verdict = check.type.run(check.params, probe)
    except (MeasureError, OSError, ValueError) as error:
        verdict = Verdict(False, f"could not be checked: {error}")
    return Outcome(check, verdict, time.monotonic() - started)


def run_checks(checks: list[TypedCheck], probe: Probe,
               on_outcome: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Every check judged, in the order given; `on_outcome` hears each one as it ends."""
    def judged(check: TypedCheck) -> Outcome:
        outcome = judge(check, probe)
        if on_outcome is not None:
            on_outcome(outcome)
        return outcome

    outcomes: dict[int, Outcome] = {}
    with ThreadPoolExecutor(max_workers=PARALLEL_CHECKS) as pool:
        for settling in (True, False):  # what a lab still settles into (its DHCP leases) first, the rest after it
            shared = [c for c in checks if not c.type.exclusive and c.type.settles == settling]
            outcomes.update({id(c): o for c, o in zip(shared, pool.map(judged, shared))})
    outcomes.update({id(c): judged(c) for c in checks if c.type.exclusive})
    return [outcomes[id(c)] for c in checks]
