"""Each deployed lab resolved and lowered once, as the agent keeps it: what a request on a running lab reads (its nodes'
devices and daemons, a link's ends) without resolving the lab again.

A lab's entry is made by its deploy or by the first request that needs it, and holds while the lab's record holds the
lab it was made from (its topology, prefix, host facts and consent): stopping a node or taking a link down changes
what is stopped or down, not the lab. Whatever changes the lab itself (an update, a checkpoint restored) makes the next
request resolve it again, unless the change says what it made of it (a link's impairment set live: `keep`). An entry is
found by the record's directory and checked against its contents, so a request gets the lab of the very record it was
handed (its own lab's: the agent hands a member only the records the member owns), never one of the same name before.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from vtopo.host.lab_parts import Compiled, compiled_from
from vtopo.host.state import LabRecord
from vtopo.kinds.registry import Registry

LAB_FIELDS = ("topology", "prefix", "facts", "consent")
"""What a lab is resolved from, in its record."""


class ResolvedLabs:
    """The deployed labs resolved, by their record."""

    def __init__(self, kinds: Registry) -> None:
        self.kinds = kinds
        self._guard = threading.Lock()
        self._kept: dict[Path, tuple[dict[str, Any], Compiled]] = {}

    def of(self, record: LabRecord) -> Compiled:
        """The lab of `record` resolved and lowered: as kept, while the record holds the lab it was made from, or
        made now (and kept)."""
        held = _lab_in(record)
        with self._guard:
            kept = self._kept.get(record.directory)
        if kept is not None and kept[0] == held:
            return kept[1]
        compiled = compiled_from(record, self.kinds)
        with self._guard:
            self._kept[record.directory] = (held, compiled)
        return compiled

    def keep(self, record: LabRecord, compiled: Compiled, read: dict[str, Any] | None = None) -> None:
        """What the record holds now is `compiled` (a deploy's, or what a live change made of the lab); `read`, the
        record as the caller has just read it."""
        held = _lab_in(record, read)
        with self._guard:
            self._kept[record.directory] = (held, compiled)

    def forget(self, record: LabRecord) -> None:
        """The lab is gone (destroyed)."""
        with self._guard:
            self._kept.pop(record.directory, None)


def _lab_in(record: LabRecord, read: dict[str, Any] | None = None) -> dict[str, Any]:
    data = record.read() if read is None else read
    return {key: data.get(key) for key in LAB_FIELDS}
