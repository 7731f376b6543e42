"""Grading: each submission deployed as the calling user through the agent with no consent, its routing given time
to converge, the assignment's checks run, and the lab destroyed whatever happened; a few submissions at once, within
the member's quota."""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from vtopo.checks.engine import PARALLEL_CHECKS, Outcome, run_until_passed
from vtopo.checks.live import LiveProbe
from vtopo.client.agent_client import AgentClient, AgentError, deployed_for
from vtopo.deployed import NotDeployed
from vtopo.grade.submission import Submission, read_submission
from vtopo.lab_terms import Trust
from vtopo.model import io
from vtopo.model.topology import Topology
from vtopo.server.policy import Policy, PolicyError

@dataclass(frozen=True)
class Graded:
    submission: Submission
    outcomes: list[Outcome]  # in the assignment's order; empty when it was not deployed
    why_not: str = ""  # why it was not graded, one line
    seconds: float = 0.0

    @property
    def passed(self) -> int:
        return sum(outcome.passed for outcome in self.outcomes)


class Grader:
    def __init__(self, assignment: Topology, client: AgentClient, converged_within_s: float,
                 parallel_checks: int = PARALLEL_CHECKS) -> None:
        self.assignment = assignment
        self.client = client
        self.converged_within_s = converged_within_s
        self.parallel_checks = parallel_checks
        self._run = os.urandom(3).hex()  # two graders of one assignment at once deploy under different names

    def lab_name(self, index: int) -> str:
        return f"grade-{self.assignment.name}-{self._run}-{index}"

    def grade(self, path: Path, index: int) -> Graded:
        started = time.monotonic()
        submission = read_submission(path, self.assignment, self.lab_name(index))
        if submission.topology is None:
            return Graded(submission, [], submission.refusal, time.monotonic() - started)
        name = submission.topology.name
        if self._deployed(name):  # by someone else: it is not grading's to destroy
            return Graded(submission, [], f"did not deploy: a lab named {name} is deployed already",
                          time.monotonic() - started)
        try:
            self.client.deploy(io.dumps(submission.topology), Trust())
            lab = deployed_for(name, "check", self.client)
            outcomes = run_until_passed(submission.checks, LiveProbe(lab), self.converged_within_s,
                                        self.parallel_checks)
        except (AgentError, NotDeployed) as error:
            return Graded(submission, [], f"did not deploy: {' '.join(str(error).split())}",
                          time.monotonic() - started)
        finally:
            self._destroy(name)
        return Graded(submission, outcomes, "", time.monotonic() - started)

    def _destroy(self, name: str) -> None:
        """Destroy the lab if any of it is there: a deploy that failed rolled back, one that was cut short may not."""
        if self._deployed(name):
            self.client.destroy(name)

    def _deployed(self, name: str) -> bool:
        return any(entry.lab == name for entry in self.client.labs())

    def grade_all(self, paths: list[Path], parallel: int, on_graded: Callable[[Graded], None] | None = None
                  ) -> list[Graded]:
        """Every submission graded, `parallel` at once, in the order given; `on_graded` hears each as it ends."""
        def graded(numbered: tuple[int, Path]) -> Graded:
            result = self.grade(numbered[1], numbered[0])
            if on_graded is not None:
                on_graded(result)
            return result

        with ThreadPoolExecutor(max_workers=parallel) as pool:
            futures = [pool.submit(graded, numbered) for numbered in enumerate(paths, 1)]
            try:
                return [future.result() for future in futures]
            except BaseException:  # Ctrl-C, or a lab that would not go: the labs being graded still go, no more start
                pool.shutdown(cancel_futures=True)
                raise


@dataclass(frozen=True)
class Share:
    """How much of the member's quota grading takes: labs deployed at once, and commands each lab's checks run at
    once (every command in a node is a connection to the agent, and a member has only so many)."""

    labs: int
    checks_per_lab: int


def share_of_quota(wanted: int, client: AgentClient, nodes_per_lab: int) -> Share:
    """`wanted` labs at once, within what the member's quota (the agent's policy, /etc/vtopo/agent.toml) leaves
    beside the labs they have deployed now; root has no quota."""
    if os.getuid() == 0:
        return Share(max(1, wanted), PARALLEL_CHECKS)
    try:
        policy = Policy.read()
    except PolicyError:
        policy = Policy()
    mine = [lab for lab in client.status() if lab.owner == os.getuid()]
    nodes_left = policy.nodes_per_member - sum(len(lab.nodes) for lab in mine)
    labs = max(1, min(wanted, policy.labs_per_member - len(mine), nodes_left // max(1, nodes_per_lab)))
    spare_connections = policy.connections_per_user // labs - 2  # each lab's deploy or destroy, and a status
    return Share(labs, max(1, min(PARALLEL_CHECKS, spare_connections)))
