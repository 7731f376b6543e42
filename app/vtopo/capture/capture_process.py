"""A capture in a process of its own, for the designer: `python -m vtopo.capture.capture_process SPEC`.

It runs the Capture, decodes at most DECODE_PER_BATCH packets per batch for the list, and writes frames to stdout:
a 4-byte length, then a pickled Report. Reading tcpdump's stream and decoding take a core at 10,000 packets/s; in
the designer's process they would hold the GIL that its GUI thread needs. The designer ends the agent with SIGTERM.
"""
from __future__ import annotations

import json
import os
import pickle
import signal
import struct
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO

from vtopo.capture.decode import PacketSummary, RawPacket, summarize
from vtopo.capture.engine import Capture
from vtopo.capture.target import CaptureError, CaptureTarget
from vtopo.model.sites import Site

BATCH_S = 0.1
DECODE_PER_BATCH = 100
"""At most this many packets are decoded for the list per batch (1,000 a second); the rest are in the file."""
COUNTERS_EVERY_S = 1.0
NICENESS = 10
_FRAME = struct.Struct("!I")


@dataclass
class Report:
    listening: bool = False
    error: str = ""
    packets: list[tuple[PacketSummary, RawPacket]] = field(default_factory=list)
    captured: int = 0
    kernel_drops: int = 0
    not_listed: int = 0
    finished: bool = False
    file_bytes: int = 0  # how much of the capture file holds whole packets: each one listed so far, and the rest


def spec_of(target: CaptureTarget, bpf: str, file: Path) -> str:
    return json.dumps({"target": asdict(target), "bpf": bpf, "file": str(file)})


def read_spec(spec: str) -> tuple[CaptureTarget, str, Path]:
    """What spec_of wrote: the target (with its site, for a capture on another machine), the filter and the file."""
    fields = json.loads(spec)
    site = fields["target"].pop("site")
    return (CaptureTarget(**fields["target"], site=Site(**site) if site else None), fields["bpf"],
            Path(fields["file"]))


def read_report(stream: IO[bytes]) -> Report | None:
    """The next report from an agent's stdout; None when it has ended."""
    header = stream.read(_FRAME.size)
    if len(header) < _FRAME.size:
        return None
    report = pickle.loads(stream.read(_FRAME.unpack(header)[0]))  # our own child's output
    assert isinstance(report, Report)
    return report


def _send(out: IO[bytes], report: Report) -> None:
    data = pickle.dumps(report, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(_FRAME.pack(len(data)) + data)
    out.flush()


def run(spec: str, out: IO[bytes]) -> int:
    os.nice(NICENESS)  # tcpdump inherits it: under a flood the designer's GUI thread gets the CPU first
    target, bpf, file = read_spec(spec)
    capture = Capture(target, bpf, file=file)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        capture.start()
    except CaptureError as error:
        _send(out, Report(error=str(error), finished=True))
        return 1
    _send(out, Report(listening=True))
    not_listed, counted = 0, time.monotonic()
    try:
        while not stop.wait(BATCH_S) and capture.running:
            arrived = capture.take()
            file_bytes = capture.flush()  # after `take`: every packet this report lists is in the file
            not_listed += max(0, len(arrived) - DECODE_PER_BATCH)
            report = Report(packets=[(summarize(p), p) for p in arrived[-DECODE_PER_BATCH:]])
            if time.monotonic() - counted >= COUNTERS_EVERY_S:
                counted = time.monotonic()
                capture.ask_for_drops()
            report.captured, report.kernel_drops, report.not_listed = capture.captured, capture.kernel_drops, not_listed
            report.file_bytes = file_bytes
            _send(out, report)
    except BrokenPipeError:
        pass  # the designer went away
    finally:
        capture.close()
    try:
        _send(out, Report(captured=capture.captured, kernel_drops=capture.kernel_drops, not_listed=not_listed,
                          finished=True, file_bytes=capture.file_bytes))
    except BrokenPipeError:
        pass
    return 0


if __name__ == "__main__":
    from vtopo.capture import capture_process  # by its own name, so that the reports it pickles name their class so too

    sys.exit(capture_process.run(sys.argv[1], sys.stdout.buffer))
