"""The designer's checker: a child process, at a low priority, that checks and compiles the lab after each edit
and answers the Explain dock's questions (COMMAND: its classes keep this module's name, as the pickles name them).

A check run on a thread of the designer held the interpreter lock for most of its second at 2,000 nodes, so the GUI
thread waited for it between frames; and on a busy machine it took a core from the GUI at the same priority. Here it
runs in its own interpreter, at a lower priority (os.nice) once it has answered the first check, and the designer only
serialises the lab and reads the answers, which say which lines of the Explain dock's script changed since the answer
before. The first check, of the lab the designer opens, runs at the designer's priority, as the warm-up does: no edit
is made yet that it could slow, and the user waits for it (the Problems panel, a deploy pressed meanwhile); at the
lower priority, on a busy machine, it waited seconds for a core.

Requests and replies are pickles, each framed by its length, on the child's stdin and stdout. The lab's nodes and
links travel in chunks of CHUNK pickled apart, so the designer's thread that pickles them never holds the interpreter
lock for long; a reply's big parts stay pickled until a panel shows them (AnalysisReply). The child drops a check once a
newer request waits (`analyse`'s `wanted`), and answers only its latest: the designer numbers each edit it checks.
"""
from __future__ import annotations

import os
import pickle
import select
import struct
import sys
import threading
from dataclasses import dataclass, replace
from typing import IO, Any, Iterable, Sequence, TypeVar

from vtopo.compile.broadcast_domains import Domain
from vtopo.gui.document.checking import Analysis, Checked, Stale, analyse
from vtopo.gui.document.line_diff import LineChange, line_changes
from vtopo.model.problems import Problem, Severity
from vtopo.model.topology import Link, Node, Topology

COMMAND = [sys.executable, "-c", "from vtopo.gui.document.check_process import main; main()"]
CHUNK = 50  # nodes or links per pickle: each pickled or unpickled in well under a millisecond
NICENESS = 10
"""os.nice's increment: a tenth of the weight of the designer's threads, whose work preempts the checker's at once.
At 19 (a 70th), a machine whose cores are busy left the checker so little that a small lab took seconds to check."""
LENGTH = struct.Struct("!Q")
T = TypeVar("T")


def chunks(items: Sequence[T]) -> list[bytes]:
    return [pickle.dumps(list(items[start:start + CHUNK])) for start in range(0, len(items), CHUNK)]


def unchunked(pickles: Iterable[bytes]) -> list[Any]:
    return [item for chunk in pickles for item in pickle.loads(chunk)]


@dataclass(frozen=True)
class CheckRequest:
    """The lab after edit `generation`: its own fields, and its nodes and links pickled in chunks."""

    generation: int
    lab: bytes
    nodes: list[bytes]
    links: list[bytes]

    @classmethod
    def of(cls, generation: int, lab: Topology, nodes: list[Node], links: list[Link]) -> CheckRequest:
        """Serialise a lab the GUI thread may edit meanwhile: pickling a list or dict it changes raises, and the
        designer then asks again (see LabAnalyzer)."""
        fields = Topology(name=lab.name, id=lab.id, notes=lab.notes, prefix=lab.prefix, vm_backend=lab.vm_backend,
                          checks=lab.checks, stages=lab.stages, experiment=lab.experiment, sites=dict(lab.sites))
        return cls(generation, pickle.dumps(fields), chunks(nodes), chunks(links))

    def topology(self) -> Topology:
        topology: Topology = pickle.loads(self.lab)
        topology.nodes = {node.id: node for node in unchunked(self.nodes)}
        topology.links = {link.id: link for link in unchunked(self.links)}
        return topology


@dataclass(frozen=True)
class ExplainRequest:
    """The script of some nodes and links (`owners`), as the check of edit `generation` planned it."""

    generation: int
    owners: frozenset[str]


@dataclass(frozen=True)
class ListedProblems:
    """A check's problems as the designer lists and marks them, errors first: a column of strings for each field."""

    severities: list[str]
    subjects: list[str]
    """Where each is: the node or link it names, or "lab"."""
    messages: list[str]
    texts: list[str]
    """Each whole, as `str(problem)` says it."""
    subject_ids: list[str]

    @classmethod
    def of(cls, problems: list[Problem]) -> ListedProblems:
        listed = sorted(problems, key=lambda problem: problem.severity is not Severity.ERROR)
        return cls([problem.severity.value for problem in listed], [problem.subject or "lab" for problem in listed],
                   [problem.message for problem in listed], [str(problem) for problem in listed],
                   [problem.subject_id for problem in listed])

    @property
    def error_count(self) -> int:
        return self.severities.count(Severity.ERROR.value)


@dataclass(frozen=True)
class AnalysisReply:
    """One check of the lab as the designer keeps it: its problems as strings, and its errors, domains and script
    changes pickled, each decoded by the panel that shows it when it shows it. As objects, a 2,000-node lab's result
    is 13,000 the cycle collector tracks, and a few results kept in turn, or decoded on the GUI thread, soon made it
    scan the designer's whole heap (200 ms, holding the interpreter lock); strings and bytes it does not track."""

    generation: int
    compiled: bool
    problems: ListedProblems
    pickled_errors: bytes
    """The errors as Problems: what a deploy asks the user's consent for."""
    pickled_domains: bytes
    explanation: str
    changed_from: int
    pickled_changes: bytes

    @classmethod
    def of(cls, analysis: Analysis) -> AnalysisReply:
        return cls(analysis.generation, analysis.compiled, ListedProblems.of(analysis.problems),
                   pickle.dumps(analysis.errors), pickle.dumps(analysis.domains), analysis.explanation,
                   analysis.changed_from, pickle.dumps(analysis.changes))

    def errors(self) -> list[Problem]:
        errors: list[Problem] = pickle.loads(self.pickled_errors)
        return errors

    def domains(self) -> list[Domain]:
        domains: list[Domain] = pickle.loads(self.pickled_domains)
        return domains

    def changes(self) -> list[LineChange] | None:
        """The lines that turn the script of the check numbered `changed_from` into this one's (None: unknown)."""
        changes: list[LineChange] | None = pickle.loads(self.pickled_changes)
        return changes


@dataclass(frozen=True)
class ExplanationReply:
    generation: int
    owners: frozenset[str]
    text: str


def write_frame(out: IO[bytes], message: object) -> None:
    data = pickle.dumps(message)
    out.write(LENGTH.pack(len(data)))
    out.write(data)
    out.flush()


def read_frame(fd: int) -> object | None:
    """The next message on `fd`, or None at its end. Reads the descriptor itself, unbuffered, so that `waiting`
    sees every byte not read yet."""
    head = _read_exactly(fd, LENGTH.size)
    if head is None:
        return None
    body = _read_exactly(fd, LENGTH.unpack(head)[0])
    return None if body is None else pickle.loads(body)


def _read_exactly(fd: int, size: int) -> bytes | None:
    parts, left = [], size
    while left:
        part = os.read(fd, min(left, 1 << 20))
        if not part:
            return None
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def waiting(fd: int) -> bool:
    """Whether a request waits on `fd` (or the designer has gone)."""
    return bool(select.select([fd], [], [], 0)[0])


def serve(requests: int, replies: IO[bytes]) -> None:
    """Answer requests until the designer closes `requests`: each check not overtaken by a newer request, with the
    lines its script changes from the one answered before, and each question about the latest check's plan. The
    first check runs at the priority the checker started with, the others NICENESS below it."""
    latest: Checked | None = None
    answered: Analysis | None = None
    check: CheckRequest | None = None
    while True:
        if check is None or waiting(requests):
            request = read_frame(requests)
            if request is None:
                return
            if isinstance(request, CheckRequest):
                check = request
            elif isinstance(request, ExplainRequest) and latest and latest.analysis.generation == request.generation:
                write_frame(replies, ExplanationReply(request.generation, request.owners,
                                                      latest.explain(set(request.owners))))
            continue
        try:
            latest = analyse(check.generation, check.topology(), lambda: not waiting(requests))
        except Stale:
            continue
        check = None
        analysis = latest.analysis
        if answered is None:
            os.nice(NICENESS)  # before the first answer: the checks after it run below the designer
        elif answered.compiled and analysis.compiled:
            analysis = replace(analysis, changed_from=answered.generation,
                               changes=line_changes(answered.explanation, analysis.explanation))
        write_frame(replies, AnalysisReply.of(analysis))
        answered = latest.analysis


def end_with_the_designer(requests: int) -> None:
    """Exit once the designer has gone (its end of `requests` closed), even in the middle of a check or the warm-up,
    where `serve` would notice only at the check's next step: a starved checker would run on for seconds."""
    hangup = select.poll()
    hangup.register(requests, 0)  # no event asked for: only a hang-up (or an error) wakes it
    hangup.poll()
    os._exit(0)


def main() -> None:
    threading.Thread(target=end_with_the_designer, args=(sys.stdin.fileno(),), daemon=True).start()
    analyse(0, Topology(name="warm-up"))  # loads the compiler and NetworkX while the designer starts, at its priority
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # what a plugin prints goes to stderr, not into the replies
    serve(sys.stdin.fileno(), replies)

