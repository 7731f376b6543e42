"""Waiting for the host to catch up: namespaces die, daemons start and routes arrive asynchronously."""
from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(predicate: Callable[[], bool], timeout: float, interval: float = 0.05) -> bool:
    """Whether `predicate` came true within `timeout` seconds, asked every `interval` and once more at the end."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())
