"""Server ports for measurement runs: a fresh one per run, never one another run here still holds.

A port can still be taken inside the destination node by something else; the runner then sees
"Address already in use" from the server and asks for another.
"""
from __future__ import annotations

import random
import threading

PORT_RANGE = (20000, 60000)

_lock = threading.Lock()
_held: set[int] = set()


def reserve_port() -> int:
    with _lock:
        while True:
            port = random.randrange(*PORT_RANGE)
            if port not in _held:
                _held.add(port)
                return port


def release_port(port: int) -> None:
    with _lock:
        _held.discard(port)
