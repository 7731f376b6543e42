"""Wireshark on a live capture: a tcpdump of its own on the same device, its pcap stream piped into
`wireshark -k -i -` (start capturing at once, from standard input).

Wireshark keeps what it reads in a temporary pcapng, which it leaves behind when it is ended by a signal: it gets
a temporary directory of its own, removed once it has ended."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence

from vtopo.capture.engine import tcpdump_argv
from vtopo.capture.target import CaptureTarget

WIRESHARK = ("wireshark", "-k", "-i", "-")
MISSING = "Wireshark is not installed (apt-get install wireshark-qt); the list here shows the same packets"


def why_not() -> str:
    """Why Wireshark cannot be opened here, or "" when it can."""
    return "" if shutil.which(WIRESHARK[0]) else MISSING


class Piped:
    """tcpdump piped into a viewer, each the leader of its own session; `close()` ends both."""

    def __init__(self, target: CaptureTarget, bpf: str = "", viewer: Sequence[str] = WIRESHARK) -> None:
        self.directory = tempfile.mkdtemp(prefix="vtopo-wireshark-")
        """The viewer's TMPDIR, where Wireshark writes the packets it reads."""
        self.dump = subprocess.Popen(tcpdump_argv(target, bpf), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        assert self.dump.stdout is not None
        try:
            self.viewer = subprocess.Popen(list(viewer), stdin=self.dump.stdout, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL, start_new_session=True,
                                           env={**os.environ, "TMPDIR": self.directory})
        except OSError:
            self.dump.kill()
            self.dump.wait()
            shutil.rmtree(self.directory)
            raise
        finally:
            self.dump.stdout.close()  # the viewer holds the pipe's only read end: tcpdump ends when the viewer does

    def close(self) -> None:
        for process in (self.viewer, self.dump):
            process.terminate()
            try:
                process.wait(3)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)
