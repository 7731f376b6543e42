"""A live capture: tcpdump on one device, in the device's namespace, streaming pcap to us.

Each packet goes to a temporary pcapng file (the full capture) and into a ring buffer that bounds memory for
whoever displays it. tcpdump runs as the leader of its own session and is ended by its process group id.
"""
from __future__ import annotations

import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from scapy.error import Scapy_Exception
from scapy.utils import RawPcapReader

from vtopo.capture.decode import RawPacket
from vtopo.capture.pcapng import NanosecondPcapNgWriter, copy_head
from vtopo.capture.target import CaptureError, CaptureTarget
from vtopo.model.rules import NETNS_DIR
from vtopo.ssh import ssh_argv

_DROPPED = re.compile(r"(\d+) packets? dropped by kernel")
_STARTED = "listening on"
START_TIMEOUT_S = 10.0
KERNEL_BUFFER_KIB = 16384


def tcpdump_argv(target: CaptureTarget, bpf: str = "", count: int | None = None) -> list[str]:
    """tcpdump writing raw pcap to stdout, each packet whole, in the target's namespace. For a user who is not root,
    the vtopo agent runs it (vtopo.client.pcap relays its output and takes its signals).

    Not --immediate-mode: the kernel hands packets over in blocks (at the latest after tcpdump's 1 s timeout), which
    keeps a 30,000 packets/s flood without drops where immediate mode dropped most of it; a large kernel buffer
    absorbs bursts. -U writes each packet as soon as tcpdump has it, with the kernel's timestamp in nanoseconds.

    On another site, `vtopo capture --pcap` runs this there, over ssh."""
    if target.site is not None:
        options = [*(["-f", bpf] if bpf else []), *(["-c", str(count)] if count else [])]
        return ssh_argv(target.site, ["vtopo", "capture", target.lab, target.label, "--pcap", *options])
    if target.lab and os.geteuid() != 0:
        return [sys.executable, "-m", "vtopo.client.pcap", target.lab, target.label, bpf, str(count or 0)]
    argv = _listening(target.device, bpf, count)
    return ["ip", "netns", "exec", target.netns, *argv] if target.netns else argv


def _listening(device: str, bpf: str, count: int | None, *options: str) -> list[str]:
    return ["tcpdump", "-i", device, "-n", "-s", "0", "-B", str(KERNEL_BUFFER_KIB), "-U", "--time-stamp-precision=nano",
            *options, "-w", "-", *_count_and_filter(bpf, count)]


def _count_and_filter(bpf: str, count: int | None) -> list[str]:
    return [*(["-c", str(count)] if count else []), *(["--", tagged_too(bpf)] if bpf else [])]  # never an option


@dataclass(frozen=True)
class LabCapture:
    """How the agent captures for a lab's owner, so that nothing they wrote (the filter) reaches a program of root's
    (Debian's tcpdump compiles a filter before it drops root, opening what its names point to: /etc/hosts,
    /etc/services, the resolver). On a device of the lab's network namespaces, tcpdump listens there as root of the
    lab's user namespace (the owner outside, with CAP_NET_RAW over the lab's namespaces alone). On one of the host's (a
    bridge, its ports, a tap), where that root may not listen, root's tcpdump listens with vtopo's words alone and
    hands every packet to `filtering`, a tcpdump run as the owner (`owner`: their uid and group, no other group and no
    capability) that reads them on stdin; `check`, run so too, compiles the filter first on a stream of no packet, so
    that a filter it refuses is said before anything listens."""

    listening: list[str]
    filtering: list[str] = field(default_factory=list)
    check: list[str] = field(default_factory=list)
    owner: tuple[int, int] | None = None


# a pcap stream's header with no packet: nanosecond timestamps, version 2.4, whole packets, Ethernet (every device a
# lab has in the host's namespace carries Ethernet frames)
EMPTY_ETHERNET_STREAM = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 262144, 1)


def lab_capture(target: CaptureTarget, bpf: str, count: int | None, userns: str, owner: tuple[int, int]
                ) -> LabCapture:
    """The capture of `target` in the lab of `owner` (uid, gid) whose user namespace is `userns` (see LabCapture)."""
    if target.netns:
        as_its_root = ("-Z", "root")  # Debian's tcpdump would drop to user tcpdump, unknown to the lab's namespace
        return LabCapture(["nsenter", f"--user={userns}", f"--net={NETNS_DIR}/{target.netns}", "--",
                           *_listening(target.device, bpf, count, *as_its_root)])
    if not bpf:
        return LabCapture(_listening(target.device, "", count))
    reading = ["tcpdump", "-r", "-", "-U", "-w", "-"]
    return LabCapture(_listening(target.device, "", None), [*reading, *_count_and_filter(bpf, count)],
                      [*reading, *_count_and_filter(bpf, None)], owner)


def tagged_too(bpf: str) -> str:
    """The filter, matching frames inside an 802.1Q tag as well. On a trunk, Linux hands a frame the switch receives
    to the filter with its tag taken off (libpcap puts it back in the file), but one the switch sends with the tag
    still in it, where `icmp` alone would miss it. A filter that names VLANs itself is left as written."""
    if re.search(r"\bvlan\b", bpf):
        return bpf
    return f"({bpf}) or (vlan and ({bpf}))"


STOPPING_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def stream_pcap(target: CaptureTarget, bpf: str, count: int | None) -> int:
    """tcpdump's pcap stream on this process's stdout and its messages on stderr, until tcpdump ends, stdin does
    (over ssh, when the other site stops the capture or goes away) or this process is told to stop by a signal.
    tcpdump's exit status."""
    try:
        tcpdump = subprocess.Popen(tcpdump_argv(target, bpf, count), stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as error:
        raise CaptureError(f"cannot start tcpdump for {target.label}: {error.strerror}") from error

    def stop() -> None:
        if tcpdump.poll() is None:
            os.killpg(tcpdump.pid, signal.SIGTERM)

    def stop_when_stdin_ends() -> None:
        while os.read(0, 4096):
            pass
        stop()

    for stopping in STOPPING_SIGNALS:  # tcpdump leads a session of its own: no signal of ours reaches it by itself
        signal.signal(stopping, lambda _signal, _frame: stop())
    threading.Thread(target=stop_when_stdin_ends, daemon=True).start()
    return tcpdump.wait()


def new_capture_file() -> Path:
    descriptor, name = tempfile.mkstemp(prefix="vtopo-capture-", suffix=".pcapng")
    os.close(descriptor)
    return Path(name)


class Capture:
    """Start with `start()`; read packets with `take()` or `follow()`; `close()` ends tcpdump and removes the file."""

    def __init__(self, target: CaptureTarget, bpf: str = "", count: int | None = None,
                 ring_size: int = 20_000, file: Path | None = None) -> None:
        """`file`: where the full capture goes, kept on close (the caller owns it); by default a temporary file."""
        self.target = target
        self.argv = tcpdump_argv(target, bpf, count)
        self.ring: deque[RawPacket] = deque(maxlen=ring_size)
        self.captured = 0
        self.kernel_drops = 0
        self.started_s = 0.0
        self._owns_file = file is None
        self.file = file or new_capture_file()
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._listening = threading.Event()
        self._finished = threading.Event()
        self._stderr: list[str] = []
        self._writer: NanosecondPcapNgWriter | None = None
        self.file_bytes = 0
        """How much of `file` holds whole packets, each one `take()` has handed out (see `flush`)."""
        self._popen: subprocess.Popen[bytes] | None = None
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        """Start tcpdump and return once it listens; CaptureError with tcpdump's words when it cannot."""
        try:
            # ssh's stdin stays open until the capture stops: on another site, its end tells the capture to stop
            stdin = subprocess.PIPE if self.target.site else subprocess.DEVNULL
            self._popen = subprocess.Popen(self.argv, stdin=stdin, stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, start_new_session=True)
        except OSError as error:
            self.close()
            raise CaptureError(f"cannot start tcpdump for {self.target.label}: {error.strerror} "
                               "(install it with scripts/setup.sh)") from error
        self.started_s = time.time()
        for work, name in ((self._read_packets, "packets"), (self._read_messages, "messages")):
            thread = threading.Thread(target=work, name=f"capture {self.target.label} {name}", daemon=True)
            thread.start()
            self._threads.append(thread)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._listening.wait(0.05):
            if self._popen.poll() is not None or time.monotonic() > deadline:
                message = " ".join(line for line in self._stderr if line) or "it did not start listening"
                self.close()
                raise CaptureError(f"capture on {self.target.label} ({self.target.device}) failed: {message}")

    @property
    def pid(self) -> int | None:
        return self._popen.pid if self._popen else None

    @property
    def running(self) -> bool:
        return not self._finished.is_set()

    def take(self, limit: int | None = None) -> list[RawPacket]:
        """The packets that arrived since the last call, oldest first (at most `limit`)."""
        with self._lock:
            count = len(self.ring) if limit is None else min(limit, len(self.ring))
            return [self.ring.popleft() for _ in range(count)]

    def follow(self, poll_s: float = 0.2) -> Iterator[RawPacket]:
        """Each packet as it arrives, until tcpdump ends (after -c N, or `stop()`)."""
        while True:
            with self._arrived:
                if not self.ring and not self._finished.is_set():
                    self._arrived.wait(poll_s)
                batch = [self.ring.popleft() for _ in range(len(self.ring))]
                finished = self._finished.is_set() and not self.ring
            yield from batch
            if finished and not batch:
                return

    def ask_for_drops(self) -> None:
        """Ask tcpdump for its counters (SIGUSR1); `kernel_drops` follows when it answers. A signal does not cross
        ssh: a capture on another site counts its drops when it ends."""
        if self._popen is not None and self._popen.poll() is None and self.target.site is None:
            self._popen.send_signal(signal.SIGUSR1)

    def flush(self) -> int:
        """Write every packet captured so far out to `file`; how many of its bytes hold them (`file_bytes`). A
        copy of that many bytes has every packet `take()` handed out before, and no part of another."""
        with self._lock:
            if self._writer is not None:
                self._writer.flush()
                self.file_bytes = self._writer.f.tell()
            return self.file_bytes

    def save(self, path: Path) -> None:
        """Copy the whole capture so far to `path` (pcapng)."""
        copy_head(self.file, path, self.flush())

    def stop(self, grace_s: float = 2.0) -> None:
        """End tcpdump (TERM, then KILL) by its process group and wait for the last packets to be read."""
        popen = self._popen
        if popen is not None and popen.poll() is None:
            try:
                os.killpg(popen.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                popen.wait(grace_s)
            except subprocess.TimeoutExpired:
                os.killpg(popen.pid, signal.SIGKILL)
                popen.wait()
        for thread in self._threads:
            thread.join(timeout=grace_s)
        self._finished.set()

    def close(self) -> None:
        self.stop()
        for stream in (self._popen.stdin, self._popen.stdout, self._popen.stderr) if self._popen else ():
            if stream is not None:
                stream.close()
        if self._owns_file:
            self.file.unlink(missing_ok=True)

    def _read_packets(self) -> None:
        assert self._popen is not None and self._popen.stdout is not None
        try:
            reader = RawPcapReader(self._popen.stdout)  # type: ignore[arg-type]  # a file object works too
        except (EOFError, Scapy_Exception):
            self._end()
            return
        writer = NanosecondPcapNgWriter(str(self.file))
        writer.linktype = reader.linktype
        writer.write_header(None)
        self._writer = writer
        scale = 1e-9 if reader.nano else 1e-6
        for data, meta in reader:
            with self._arrived:
                writer.write_raw(data, meta.sec, meta.usec, reader.nano, meta.wirelen)
                self.captured += 1
                self.ring.append(RawPacket(self.captured, meta.sec + meta.usec * scale, data, meta.wirelen))
                self._arrived.notify_all()
        with self._lock:
            writer.close()
            self.file_bytes = self.file.stat().st_size
            self._writer = None
        self._end()

    def _end(self) -> None:
        with self._arrived:
            self._finished.set()
            self._arrived.notify_all()

    def _read_messages(self) -> None:
        assert self._popen is not None and self._popen.stderr is not None
        for raw in self._popen.stderr:
            line = raw.decode(errors="replace").strip()
            if _STARTED in line:
                self._listening.set()
            elif (dropped := _DROPPED.search(line)) is not None:
                self.kernel_drops = int(dropped.group(1))
            elif line and "packets" not in line:
                self._stderr.append(line)
