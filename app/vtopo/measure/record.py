"""What every measurement result carries: who measured what, when, how it ended; and its JSON form."""
from __future__ import annotations

import dataclasses
import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal, TypeVar

import dacite

Status = Literal["ok", "cancelled", "failed"]

T = TypeVar("T", bound="RunRecord")


def _as_float(value: Any) -> Any:
    """JSON writes 3.0 as 3: an integer is a fine value for a float field."""
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


_FROM_JSON = dacite.Config(type_hooks={float: _as_float}, strict=False)  # derived figures in the JSON are skipped


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
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls: type[T], data: Any) -> T:
        """The record `data` describes, every field checked against its type; ValueError names the field that
        does not fit (a history file is someone else's data)."""
        if not isinstance(data, dict):
            raise ValueError(f"a run is an object, not {type(data).__name__}")
        try:
            return dacite.from_dict(cls, data, config=_FROM_JSON)
        except dacite.DaciteError as error:
            raise ValueError(str(error)) from None

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    @classmethod
    def from_json(cls: type[T], text: str) -> T:
        return cls.from_dict(json.loads(text))
