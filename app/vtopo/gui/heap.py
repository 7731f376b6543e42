"""Keeping Python's cycle collector from stalling the GUI thread.

A full collection scans every object alive while it holds the interpreter lock, whichever thread started it: with
a 2,000-node lab open (the model, its items, their wrappers) that is 100 ms and more, and a check on the worker
thread, which makes many objects, starts such collections again and again. So the collector is paused while a
lab's items are built and while a check runs, and once the lab is open everything alive is moved out of its sight
(`gc.freeze`). Objects that die later are still freed by reference counting; cycles among the frozen ones wait for
the next settle.
"""
from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collection_paused() -> Iterator[None]:
    """While many long-lived objects are made at once (a lab's items): no collection half-way."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def made_to_last() -> Iterator[None]:
    """While a worker makes a result that lives until the next one (a check of the lab and its plan): no collection
    half-way, and then what it made is left out of later collections at once. Otherwise the first collection after
    it scans all of it while holding the interpreter lock (5-10 ms at 2,000 nodes: a stall of the GUI thread).
    Such a result is freed by reference counting; its few cycles wait for the next settle."""
    with collection_paused():
        yield
        gc.freeze()


def settle() -> None:
    """Collect what is unreachable now, then leave everything still alive out of later collections."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
