"""The agent's long-lived heap kept out of the cycle collector's way. A deployed lab's record and its resolved lab
are a few hundred thousand objects (110,000 for 2,000 containers) that live as long as the lab; left in the oldest
generation, each full collection walks them all (80-250 ms), about once a minute while a designer follows the lab's
link rates. What survives a full collection is frozen instead (gc.freeze), so the next one walks only what came
since; what was frozen is thawed whenever a lab's record is replaced or dropped, so that the next full collection
frees the cycles it left, and freezes what still lives."""
from __future__ import annotations

import gc


def freeze_survivors() -> None:
    """From now on, in this process (the agent's own), whatever survives a full collection is frozen."""
    if _frozen_after_full_collection not in gc.callbacks:
        gc.callbacks.append(_frozen_after_full_collection)


def thaw() -> None:
    """A lab's record was replaced or dropped: what was frozen is collected again."""
    gc.unfreeze()


def _frozen_after_full_collection(phase: str, info: dict[str, int]) -> None:
    if phase == "stop" and info["generation"] == 2:
        gc.freeze()
