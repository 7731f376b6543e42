"""The agent's long-lived heap (vtopo.server.long_lived): what survives a full collection is frozen, so the next one
does not walk it, and a lab dropped since is freed once thawed. In a process of its own: freezing is process-wide."""
from __future__ import annotations

import subprocess
import sys

AGENT_LIKE = """
import gc, weakref
from vtopo.server.long_lived import freeze_survivors, thaw

class Part:
    def __init__(self):
        self.itself = self  # a cycle, as a resolved lab's objects refer to each other

freeze_survivors()
lab = [Part() for _ in range(1000)]
gc.collect()
frozen = gc.get_freeze_count()
assert frozen >= 1000 and gc.get_count()[2] == 0, (frozen, gc.get_count())
part = weakref.ref(lab[0])
del lab  # the lab is destroyed: its parts are cycles only the collector frees
gc.collect()
assert part() is not None, "a frozen cycle waits for the thaw"
thaw()
gc.collect()
assert part() is None and gc.get_freeze_count() < frozen, "thawed, the next full collection frees the lab"
print("ok")
"""


def test_what_survives_a_full_collection_is_frozen_and_a_lab_dropped_is_freed_once_thawed() -> None:
    done = subprocess.run([sys.executable, "-c", AGENT_LIKE], capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.strip() == "ok", done.stderr
