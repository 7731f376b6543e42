"""Problems found in a lab: by the loader, by kind checks and by the compiler."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Iterable


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class ConsentRequest:
    """What the user may allow at deploy time to clear a problem; a lab file can never allow it itself."""

    what: str  # "host device", "disk image" or "startup commands"
    name: str  # the interface name, or the image's absolute path
    effect: str  # what allowing it does, in the words the consent dialog shows


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a lab, naming where it is.

    `subject` is the node or link the user knows by name ("node c1", "link c1:eth0-br0:p1").
    `path` is the JSON path in the .vtopo file when the problem comes from the file itself.
    `subject_id` is the stable id, so a GUI can select the culprit.
    """

    message: str
    subject: str = ""
    path: str = ""
    subject_id: str = ""
    severity: Severity = Severity.ERROR
    consent: ConsentRequest | None = None  # set when the user's consent would clear this error

    def __str__(self) -> str:
        where = " ".join(part for part in (self.subject, f"at {self.path}" if self.path else "") if part)
        prefix = f"{self.severity.value}: "
        return f"{prefix}{where}: {self.message}" if where else f"{prefix}{self.message}"


class LabError(Exception):
    """A lab that cannot be used as it is. Carries every problem found, not only the first."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.ERROR]


def errors_in(problems: Iterable[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity is Severity.ERROR]
