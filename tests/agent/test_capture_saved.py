"""`vtopo capture` as a member through the agent: with -w, the file holds every packet captured, with the kernel's
timestamps in nanoseconds, and Wireshark's tools read it cleanly; a SIGTERM ends a capture as Ctrl-C does."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from residue import snapshot
from tests.agent.test_agent_verbs import saved_copy

pytestmark = pytest.mark.privileged

PINGS = 1000
INTERVAL_S = 0.005


def epoch_times(path: str, *fields: str) -> list[list[str]]:
    shown = subprocess.run(["tshark", "-r", path, "-T", "fields", *(f"-e{field}" for field in fields)],
                           capture_output=True, text=True, check=True, timeout=60)
    return [line.split("\t") for line in shown.stdout.splitlines()]


def started(process: subprocess.Popen[str], said: str) -> bool:
    """Whether `process` said a line holding `said` on its standard error (it is listening) before it ended."""
    assert process.stderr is not None
    return any(said in line for line in process.stderr)  # tcpdump -w: "tcpdump: listening on ..."


def test_a_thousand_pings_every_5_ms_are_saved_whole_with_their_nanoseconds(agent, users, readable_dir):
    a = users["a"]
    before = snapshot()
    lab = saved_copy("bridge-veth", readable_dir, name="pcap-lab", prefix="vpc")
    saved, reference = readable_dir / "c1.pcapng", readable_dir / "reference.pcap"
    os.chown(readable_dir, a.pw_uid, a.pw_gid)  # a writes the capture there
    assert (deployed := agent.vtopo(a.pw_name, "deploy", str(lab))).returncode == 0, deployed.stderr
    prefix = next(line.split("prefix ")[1].split(")")[0] for line in agent.vtopo(None, "status", "pcap-lab").stdout
                  .splitlines() if line.startswith("lab pcap-lab "))
    try:
        assert agent.vtopo(a.pw_name, "exec", "pcap-lab", "c1", "--", "ping", "-c1", "10.0.0.2").returncode == 0
        capture = agent.spawn(a.pw_name, "capture", "pcap-lab", "c1:eth0", "-f", "icmp", "-c", str(2 * PINGS),
                              "-w", str(saved))
        # root's own tcpdump on the same device, as the kernel timestamps each packet
        own = subprocess.Popen(["ip", "netns", "exec", f"{prefix}-c1", "tcpdump", "-Z", "root", "-i", "eth0", "-n", "-c",
                                str(2 * PINGS), "--time-stamp-precision=nano", "-w", str(reference), "icmp"],
                               stderr=subprocess.PIPE, text=True)
        assert started(capture, "capturing on") and started(own, "listening on")  # neither misses the first ping
        pinged = agent.vtopo(a.pw_name, "exec", "pcap-lab", "c1", "--", "ping", "-q", "-c", str(PINGS), "-i",
                             str(INTERVAL_S), "10.0.0.2", timeout=60)
        assert pinged.returncode == 0, pinged.stdout + pinged.stderr
        _, said = capture.communicate(timeout=30)
        assert capture.returncode == 0, said
        assert own.wait(timeout=30) == 0
    finally:
        assert agent.vtopo(a.pw_name, "destroy", "pcap-lab").returncode == 0
    assert f"{2 * PINGS} packets captured" in said
    rows = epoch_times(str(saved), "frame.time_epoch", "icmp.type", "icmp.seq")
    assert len(rows) == 2 * PINGS, "every packet captured is in the file"
    expected = {(kind, seq): when for when, kind, seq in epoch_times(str(reference), "frame.time_epoch", "icmp.type",
                                                                     "icmp.seq")}
    requests = [(float(when), (kind, seq)) for when, kind, seq in rows if kind == "8"]
    assert len(requests) == PINGS
    assert all(len(when.split(".")[1]) == 9 for when, _, _ in rows), "nanoseconds, as the file declares"
    assert len({when.split(".")[1] for when, _, _ in rows}) > PINGS, "not cut to whole seconds or microseconds"
    for (earlier, first), (later, second) in zip(requests, requests[1:]):
        kernel = float(expected[second]) - float(expected[first])
        assert abs((later - earlier) - kernel) < 0.001, (first, second, later - earlier, kernel)
    info = subprocess.run(["capinfos", str(saved)], capture_output=True, text=True, timeout=60)
    assert info.returncode == 0 and not info.stderr.strip(), info.stderr
    assert "nanoseconds" in info.stdout and f"Number of packets:   {2 * PINGS}" in info.stdout, info.stdout
    assert snapshot() - before == {}


def processes_holding(text: str) -> list[int]:
    """The pids of the processes whose command line holds `text`."""
    held = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text in (entry / "cmdline").read_bytes().decode(errors="replace"):
                held.append(int(entry.name))
        except OSError:
            continue  # ended meanwhile
    return held


def captures_of(user: int) -> set[Path]:
    """The temporary capture files of `user` in the temporary directory."""
    return {path for path in Path(tempfile.gettempdir()).glob("vtopo-capture-*") if path.stat().st_uid == user}


def told_to_stop(agent, user: str, filter_text: str, *options: str) -> subprocess.Popen[str]:  # type: ignore[no-untyped-def]
    """`vtopo capture pcap-stop c1:eth0 -f FILTER OPTIONS` as `user`, once it listens, sent SIGTERM (the command, not
    runuser before it), and ended; no process is left holding its filter."""
    command = subprocess.Popen(["runuser", "-u", user, "--", sys.executable, "-m", "vtopo", "capture", "pcap-stop",
                                "c1:eth0", "-f", filter_text, *options], env=agent.env, cwd="/",
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert started(command, "listening on" if "--pcap" in options else "capturing on")
    assert len(processes_holding(filter_text)) >= 3  # runuser, the command, its client of the agent's tcpdump...
    vtopo, = Path(f"/proc/{command.pid}/task/{command.pid}/children").read_text().split()
    os.kill(int(vtopo), signal.SIGTERM)
    command.wait(timeout=30)
    deadline = time.monotonic() + 10
    while processes_holding(filter_text) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_holding(filter_text) == [], "the member's client and the agent's tcpdump end with the command"
    return command


def test_a_capture_told_to_stop_by_a_signal_ends_as_ctrl_c_ends_it(agent, users, readable_dir):
    """A capture sent SIGTERM ends as Ctrl-C ends it: its capture behind it, and its temporary file, go with it, and
    -w saves what it captured. So does what another site runs for a remote capture (`vtopo capture --pcap`), as
    tcpdump would, not only when its stdin ends."""
    a = users["a"]
    before, files_before = snapshot(), captures_of(a.pw_uid)
    lab = saved_copy("bridge-veth", readable_dir, name="pcap-stop", prefix="vps")
    os.chown(readable_dir, a.pw_uid, a.pw_gid)  # a writes the capture there
    assert (deployed := agent.vtopo(a.pw_name, "deploy", str(lab))).returncode == 0, deployed.stderr
    try:
        told_to_stop(agent, a.pw_name, "icmp and not host 192.0.2.77", "--pcap")
        saving = told_to_stop(agent, a.pw_name, "icmp and not host 192.0.2.78", "-w", str(readable_dir / "c1.pcapng"))
        assert saving.stderr is not None and "packets captured" in saving.stderr.read()
        assert (readable_dir / "c1.pcapng").stat().st_uid == a.pw_uid
        assert captures_of(a.pw_uid) == files_before, "a capture's temporary file goes with it"
    finally:
        assert agent.vtopo(a.pw_name, "destroy", "pcap-stop").returncode == 0
    assert snapshot() - before == {}
