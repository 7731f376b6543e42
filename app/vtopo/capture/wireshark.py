"""Wireshark on a capture's packets: a copy of what the capture file holds so far, a pcapng in a temporary directory
of the viewer's own, which Wireshark opens (`wireshark -r FILE`).

Wireshark runs in a session of its own. A thread waits for it, so that once it ends it is reaped at once (no
<defunct> process until the designer exits) and its directory goes; `close()` ends it first."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from vtopo.capture.pcapng import copy_head

PROGRAM = "wireshark"
"""The viewer, found on PATH."""
MISSING = "Wireshark is not installed (apt-get install wireshark-qt); the list here shows the same packets"


def why_not() -> str:
    """Why Wireshark cannot be opened here, or "" when it can."""
    return "" if shutil.which(PROGRAM) else MISSING


class Viewer:
    """Wireshark on the first `length` bytes of the capture file `packets` (its whole blocks), copied as `name`."""

    def __init__(self, packets: Path, length: int, name: str) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="vtopo-wireshark-"))
        """The copy's directory, and the viewer's TMPDIR."""
        self.file = self.directory / name
        try:
            copy_head(packets, self.file, length)
            self.process = subprocess.Popen([PROGRAM, "-r", str(self.file)], stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                            start_new_session=True, env={**os.environ, "TMPDIR": str(self.directory)})
        except OSError:
            shutil.rmtree(self.directory)
            raise
        threading.Thread(target=self._reap, name=f"reaps {PROGRAM} {self.process.pid}", daemon=True).start()

    def _reap(self) -> None:
        self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(3)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)
