"""The cycle collector in a test that counts what only it frees."""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collector_paused() -> Iterator[None]:
    """Collect what is unreachable now, then keep the collector off, and leave it as it was: off for good once the
    process made a designer window (vtopo.gui.workers.GuiThreadCollector)."""
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
