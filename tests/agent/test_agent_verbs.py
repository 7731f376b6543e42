"""What a lab's owner does through the agent besides deploying, as a user who is not root: vtysh on a router (that
reaches this router only), the checks, a capture, a VM's console and commands in a VM, measurements from a VM and
an experiment. Another member of the group is refused each with one line."""
from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from residue import snapshot, zombie_children
from vtopo.lab import open_lab
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

OSPF_SECONDS = 30
BOOT_SECONDS = 90
PROMPT = r"[\w.-]+# "  # vtysh's, in its enable node
PINGS = ("exec", "l2-vs-l3", "h1", "--", "ping", "-c", "40", "-i", "0.2", "10.2.0.10")  # h1 to h3 for 8 s, via r1
# "Open in Wireshark" on a capture of the lab's owner who is not root (the agent ran its tcpdump): a copy of what the
# capture file holds, opened with wireshark -r, here a stand-in that writes what tshark reads of it
WIRESHARK_ON_A_CAPTURE = """
import sys
from pathlib import Path
from vtopo.capture.wireshark import Viewer

packets = Path(sys.argv[1])
viewer = Viewer(packets, packets.stat().st_size, "r1-eth1.pcapng")
assert viewer.process.wait(timeout=50) == 0
"""
STAND_IN_WIRESHARK = "#!/bin/sh\n# wireshark -r FILE, as the member: what tshark reads of the file it was given\n" \
                     "exec tshark -n -r \"$2\" > \"$(dirname \"$0\")/wireshark.txt\"\n"


def refused_by_owner(result: subprocess.CompletedProcess[str], owner: str) -> bool:
    """One line on stderr, naming the owner."""
    lines = result.stderr.strip().splitlines()
    return result.returncode != 0 and len(lines) == 1 and f"belongs to {owner}; only {owner} or root" in lines[0]


def saved_copy(shipped: str, directory: Path, **changes: str) -> Path:
    """A shipped lab, changed (name, prefix, vm_backend), saved where every test user can read it."""
    topology = open_lab(TOPOLOGIES / f"{shipped}.vtopo").topology
    for field, value in changes.items():
        setattr(topology, field, value)
    path = directory / f"{topology.name}.vtopo"
    io.save(topology, path)
    path.chmod(0o644)
    return path


class Terminal:
    """A command run as a user on a pty of its own, typed into and read as a person would."""

    def __init__(self, agent, user: str, *argv: str, rows: int = 24, columns: int = 100) -> None:  # type: ignore[no-untyped-def]
        self.master, slave = os.openpty()
        self.resize(rows, columns, slave)
        os.set_blocking(self.master, False)
        # in a session of its own whose controlling terminal is the pty, as in a terminal emulator: ^C and resizes
        # reach the command (util-linux's setsid; the child is no group leader, so it does not fork)
        self.process = subprocess.Popen(["setsid", "--ctty", "runuser", "-u", user, "--", sys.executable, "-m",
                                         "vtopo", *argv], stdin=slave, stdout=slave, stderr=slave,
                                        env={**agent.env, "TERM": "xterm"}, cwd="/")
        os.close(slave)
        self.seen = b""

    def resize(self, rows: int, columns: int, end: int | None = None) -> None:
        """As a terminal emulator does when its window changes: the kernel tells the command (SIGWINCH)."""
        fcntl.ioctl(self.master if end is None else end, termios.TIOCSWINSZ, struct.pack("4H", rows, columns, 0, 0))

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def expect(self, pattern: str, seconds: float = 20) -> re.Match[bytes]:
        """Wait until the output since the last match holds `pattern`."""
        deadline = time.monotonic() + seconds
        while (found := re.search(pattern.encode(), self.seen)) is None:
            left = deadline - time.monotonic()
            assert left > 0, f"no {pattern!r} in {self.seen.decode(errors='replace')!r}"
            if select.select([self.master], [], [], left)[0]:
                try:
                    self.seen += os.read(self.master, 65536)
                except OSError:  # the command ended
                    assert False, f"ended before {pattern!r}: {self.seen.decode(errors='replace')!r}"
        self.seen = self.seen[found.end():]
        return found

    def close(self) -> int:
        try:
            return self.process.wait(timeout=10)
        finally:
            os.close(self.master)


def vtysh_owners() -> set[int]:
    """The uids of the vtysh processes running on the host."""
    owners = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
        except OSError:
            continue
        if fields.get("Name", "").strip() == "vtysh":
            owners.add(int(fields["Uid"].split()[0]))
    return owners


def test_vtysh_checks_and_capture_for_the_owner_only(agent, users, readable_dir):
    a, b = users["a"].pw_name, users["b"].pw_name
    before = snapshot()
    mine = saved_copy("l2-vs-l3", readable_dir)
    theirs = saved_copy("l2-vs-l3", readable_dir, name="l2-vs-l3-b", prefix="vtb")
    for user, path in ((a, mine), (b, theirs)):
        deployed = agent.vtopo(user, "deploy", str(path))
        assert deployed.returncode == 0, deployed.stderr
    a_prefix = next(line.split("prefix ")[1].split(")")[0] for line in agent.vtopo(None, "status", "l2-vs-l3").stdout
                    .splitlines() if line.startswith("lab l2-vs-l3 "))
    try:
        deadline = time.monotonic() + OSPF_SECONDS
        while "Full" not in (shown := agent.vtopo(a, "exec", "l2-vs-l3", "r1", "--", "vtysh", "-c",
                                                  "show ip ospf neighbor")).stdout:
            assert time.monotonic() < deadline, shown.stdout + shown.stderr
            time.sleep(0.5)
        assert re.search(r"10\.2\.0\.1 .*Full.*10\.0\.12\.2 ", shown.stdout), shown.stdout  # r2, over eth1

        vtysh = Terminal(agent, a, "exec", "l2-vs-l3", "r1", "--", "vtysh")
        try:
            vtysh.expect(PROMPT)
            vtysh.type("sh\tip osp\tnei\t\r")  # Tab completes each word
            vtysh.expect(r"show ip ospf neighbor")  # typed: sh, ip osp, nei
            vtysh.expect(r"10\.2\.0\.1 .*Full")
            assert vtysh_owners() == {users["a"].pw_uid}, "a's vtysh runs as a, not as root"
            vtysh.type("start-shell\r")  # FRR's way out of vtysh, when it is built with one: this build has none
            vtysh.expect(r"Unknown command: start-shell")
            vtysh.type("exit\r")
            assert vtysh.close() == 0
        finally:
            vtysh.process.kill()

        peek = agent.vtopo(b, "exec", "l2-vs-l3-b", "r1", "--", "sh", "-c",
                           f"ls /run/vtopo/{a_prefix}/r1/zebra.vty 2>&1; ls /run/vtopo 2>&1")
        # nothing of a's router shows: the node's /run is its own
        assert peek.stdout.count("No such file or directory") == 2, peek.stdout + peek.stderr
        assert refused_by_owner(agent.vtopo(b, "exec", "l2-vs-l3", "r1", "--", "vtysh", "-c", "show version"), a)

        checked = agent.vtopo(a, "check", "l2-vs-l3", timeout=180)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert re.search(r"^(\d+) of \1 checks pass", checked.stdout, re.MULTILINE), checked.stdout
        assert "pass  r1 and r2 are OSPF neighbours" in checked.stdout or "ospf" in checked.stdout.lower()
        assert refused_by_owner(agent.vtopo(b, "check", "l2-vs-l3"), a)

        capture = agent.spawn(a, "capture", "l2-vs-l3", "r1:eth1", "-c", "4", "-f", "icmp")
        pings = agent.spawn(a, *PINGS)  # until well after the capture listens, whenever that is
        captured, messages = capture.communicate(timeout=30)
        assert pings.wait(timeout=30) == 0
        assert capture.returncode == 0, messages
        assert "capturing on r1:eth1" in messages and "4 packets captured" in messages, messages
        assert len(re.findall(r"10\.1\.0\.10 → 10\.2\.0\.10 .*ICMP|10\.1\.0\.10 > 10\.2\.0\.10|ICMP", captured)) >= 4, \
            captured
        assert refused_by_owner(agent.vtopo(b, "capture", "l2-vs-l3", "r1:eth1", "-c", "1"), a)

        mine = readable_dir / a  # Open in Wireshark on the member's own capture: Wireshark gets the packets it holds
        mine.mkdir()
        os.chown(mine, users["a"].pw_uid, users["a"].pw_gid)
        stand_in = mine / "wireshark"
        stand_in.write_text(STAND_IN_WIRESHARK)
        stand_in.chmod(0o755)
        saved = mine / "r1-eth1.pcapng"
        capture = agent.spawn(a, "capture", "l2-vs-l3", "r1:eth1", "-c", "3", "-f", "icmp", "-w", str(saved))
        pings = agent.spawn(a, *PINGS)
        _, messages = capture.communicate(timeout=30)
        assert pings.wait(timeout=30) == 0 and capture.returncode == 0, messages
        shark = subprocess.run(["runuser", "-u", a, "--", sys.executable, "-c", WIRESHARK_ON_A_CAPTURE, str(saved)],
                               env={**agent.env, "HOME": str(readable_dir), "PATH": f"{mine}:{os.environ['PATH']}"},
                               cwd="/", text=True, capture_output=True, timeout=60)
        assert shark.returncode == 0, shark.stdout + shark.stderr
        shown = (mine / "wireshark.txt").read_text()
        assert len(re.findall(r"10\.1\.0\.10 → 10\.2\.0\.10 +ICMP", shown)) >= 1, shown
    finally:
        for user, lab in ((a, "l2-vs-l3"), (b, "l2-vs-l3-b")):
            agent.vtopo(user, "destroy", lab)
    assert snapshot() - before == {}
    assert agent.process is not None and not zombie_children(agent.process.pid), "FRR's launchers were not reaped"


def test_vm_console_exec_measurements_and_experiment_for_the_owner_only(agent, users, readable_dir):
    a, b = users["a"].pw_name, users["b"].pw_name
    before = snapshot()
    path = saved_copy("vm-router", readable_dir, vm_backend="qemu")
    deployed = agent.vtopo(a, "deploy", str(path))
    assert deployed.returncode == 0, deployed.stderr
    try:
        deadline = time.monotonic() + BOOT_SECONDS
        while (inside := agent.vtopo(a, "exec", "vm-router", "vmr", "--", "ip", "-4", "-o", "addr")).returncode:
            assert time.monotonic() < deadline, inside.stderr
            time.sleep(1)
        assert "10.1.1.1/" in inside.stdout and "10.1.2.1/" in inside.stdout, inside.stdout
        assert agent.vtopo(a, "exec", "vm-router", "vmr", "--", "sh", "-c", "exit 3").returncode == 3

        console = subprocess.run(["runuser", "-u", a, "--", sys.executable, "-m", "vtopo", "console", "vm-router",
                                  "vmr"], input="echo vtopo-$((6*7))\n", env=agent.env, capture_output=True,
                                 text=True, timeout=60, cwd="/")
        assert console.returncode == 0, console.stderr
        assert "vtopo-42" in console.stdout, console.stdout  # typed, run by the guest's shell, echoed back

        pinged = agent.vtopo(a, "ping", "vm-router", "vmr", "c2", "-c", "2")
        assert pinged.returncode == 0 and "2 received" in pinged.stdout, pinged.stdout + pinged.stderr
        rate = agent.vtopo(a, "iperf", "vm-router", "c1", "vmr", "-t", "1")
        assert rate.returncode == 0 and re.search(r"sender [\d.]+ [KMG]b/s", rate.stdout), rate.stdout + rate.stderr

        out = readable_dir / "out"
        out.mkdir()
        os.chown(out, users["a"].pw_uid, users["a"].pw_gid)
        experiment = agent.vtopo(a, "experiment", "vm-router", "--repeat", "1", "--warmup", "0", "--seconds", "1",
                                 "--no-history", "--out", str(out), timeout=240)
        assert experiment.returncode == 0, experiment.stdout + experiment.stderr
        assert (out / "vm-router.experiment.csv").exists() and "routed through the VM" in experiment.stdout

        for refused in (agent.vtopo(b, "console", "vm-router", "vmr"),
                        agent.vtopo(b, "exec", "vm-router", "vmr", "--", "true"),
                        agent.vtopo(b, "experiment", "vm-router", "--seconds", "1")):
            assert refused_by_owner(refused, a), refused.stderr
    finally:
        destroyed = agent.vtopo(a, "destroy", "vm-router")
    assert destroyed.returncode == 0, destroyed.stderr
    assert snapshot() - before == {}
