"""What every measurement result carries: who measured what, when, how it ended; and its JSON form."""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal, TypeVar

Status = Literal["ok", "cancelled", "failed"]

T = TypeVar("T", bound="RunRecord")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(kw_only=True)
class RunRecord:
    source: str
    destination: str
    address: str
    lab: str = ""
    path: str = ""
    """The caller's description of the path (e.g. "veth → br0 → veth")."""
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    started_at: str = field(default_factory=_now)
    status: Status = "ok"
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_dict(cls: type[T], data: dict[str, Any]) -> T:
        raise NotImplementedError

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_json(cls: type[T], text: str) -> T:
        return cls.from_dict(json.loads(text))
