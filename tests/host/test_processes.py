"""vtopo.host.processes: generic daemons (unprivileged) and FRR zebra + ospfd in namespaces (privileged)."""
from __future__ import annotations

import os
import pwd
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from residue import zombie_children
from vtopo.host.processes import (SHOWN_BYTES, CommandFailed, DaemonError, kill_each, process_alive, run_command,
                                  start_daemon, stop_process)

SUFFIX = f"{os.getpid() % 100000}"

# A stand-in daemon: writes its pid file, optionally a ready file, then sleeps.
FAKE_DAEMON = """
import os, sys, time
pid_file, ready, marker = sys.argv[1], sys.argv[2], sys.argv[3]
if marker != "-":
    with open(marker, "w") as fh:
        fh.write(os.readlink("/proc/self/ns/net"))
with open(pid_file, "w") as fh:
    fh.write(f"{os.getpid()}\\n")
if ready != "-":
    open(ready, "w").close()
time.sleep(120)
"""


# A stand-in for FRR's -d: the child becomes the daemon; the parent exits a moment after the child is ready.
DETACHING_DAEMON = """
import os, sys, time
if os.fork():
    time.sleep(0.3)
    sys.exit(0)
""" + FAKE_DAEMON


def fake_daemon(pid_file: Path, ready: Path | None, marker: str = "-", code: str = FAKE_DAEMON) -> list[str]:
    return [sys.executable, "-c", code, str(pid_file), str(ready or "-"), marker]


@pytest.fixture
def run_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="vtopo-proc-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# -- generic, unprivileged ---------------------------------------------------------------------
def test_start_wait_ready_and_stop(run_dir: Path) -> None:
    pid_file, ready = run_dir / "d.pid", run_dir / "d.ready"
    pid = start_daemon(fake_daemon(pid_file, ready), None, pid_file, ready, timeout_s=10)
    try:
        assert ready.exists()
        assert process_alive(pid, str(pid_file))
        assert not process_alive(pid, "something-else")
    finally:
        stop_process(pid, str(pid_file))
    assert not process_alive(pid, str(pid_file))
    assert not Path(f"/proc/{pid}").exists()  # our child: reaped, not a zombie


def test_a_daemon_that_detaches_leaves_no_zombie_behind(run_dir: Path) -> None:
    before = zombie_children(os.getpid())
    pid_file, ready = run_dir / "d.pid", run_dir / "d.ready"
    pid = start_daemon(fake_daemon(pid_file, ready, code=DETACHING_DAEMON), None, pid_file, ready, timeout_s=10)
    try:
        deadline = time.monotonic() + 10
        while not zombie_children(os.getpid()) - before and time.monotonic() < deadline:
            time.sleep(0.05)  # the parent half exits after start_daemon returned
        assert zombie_children(os.getpid()) - before, "the launcher did not end"
    finally:
        stop_process(pid, str(pid_file))
    assert not zombie_children(os.getpid()) - before


def test_kill_each_waits_until_processes_that_are_not_its_children_are_gone(run_dir: Path) -> None:
    pid_file, ready = run_dir / "d.pid", run_dir / "d.ready"
    pid = start_daemon(fake_daemon(pid_file, ready, code=DETACHING_DAEMON), None, pid_file, ready, timeout_s=10)
    kill_each([pid, pid])  # a pid twice, as a namespace's list may hold a process that ends while it is read
    assert not process_alive(pid, str(pid_file))


def test_stop_refuses_a_process_with_another_cmdline() -> None:
    proc = subprocess.Popen(["sleep", "30"])
    try:
        stop_process(proc.pid, "not-my-daemon.conf")
        assert proc.poll() is None  # untouched
        assert process_alive(proc.pid, "sleep")
    finally:
        stop_process(proc.pid, "sleep 30")
    assert proc.wait(1) == -15


def test_stop_gone_pid_is_fine() -> None:
    proc = subprocess.Popen(["true"])
    proc.wait()
    stop_process(proc.pid, "true")
    assert not process_alive(proc.pid, "true")


def test_zombie_is_not_alive() -> None:
    proc = subprocess.Popen(["true"])
    deadline = time.monotonic() + 5
    while Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert not process_alive(proc.pid, "true")  # exited, not yet reaped
    stop_process(proc.pid, "true")
    proc.wait()


def test_stop_escalates_to_sigkill(run_dir: Path) -> None:
    script = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", script, "ignore-term"], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"up\n"
    t0 = time.monotonic()
    stop_process(proc.pid, "ignore-term", timeout_s=0.5)
    assert 0.4 < time.monotonic() - t0 < 5
    assert proc.wait(1) == -9
    proc.stdout.close()


def test_failed_start_reports_output_and_log(run_dir: Path) -> None:
    log = run_dir / "d.log"
    log.write_text("line 1\nzebra: cannot bind vty socket\n")
    argv = [sys.executable, "-c", "import sys; print('bad config line 3', file=sys.stderr); sys.exit(3)"]
    with pytest.raises(DaemonError) as info:
        start_daemon(argv, None, run_dir / "d.pid", None, timeout_s=5, log_file=log)
    text = str(info.value)
    assert "exited with status 3" in text
    assert "bad config line 3" in text
    assert "cannot bind vty socket" in text


def test_timeout_stops_what_it_started(run_dir: Path) -> None:
    pid_file, ready = run_dir / "d.pid", run_dir / "never"
    argv = fake_daemon(pid_file, None)
    with pytest.raises(DaemonError) as info:
        start_daemon(argv, None, pid_file, ready, timeout_s=0.5)
    assert "not ready after 0.5 s" in str(info.value)
    pid = int(pid_file.read_text())
    assert not process_alive(pid, str(pid_file))


def test_stale_pid_and_ready_files_are_replaced(run_dir: Path) -> None:
    pid_file, ready = run_dir / "d.pid", run_dir / "d.ready"
    pid_file.write_text("1\n")  # pid 1 is not our daemon
    ready.write_text("")  # stale: must not count as ready
    pid = start_daemon(fake_daemon(pid_file, ready), None, pid_file, ready, timeout_s=10)
    try:
        assert pid != 1
        with pytest.raises(DaemonError, match="already running"):
            start_daemon(fake_daemon(pid_file, ready), None, pid_file, ready, timeout_s=10)
    finally:
        stop_process(pid, str(pid_file))


# -- privileged helpers ------------------------------------------------------------------------
def sh(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, check=check, timeout=30)


def ping(ns: str, addr: str) -> bool:
    tool = ["ping"] if shutil.which("ping") else ["busybox", "ping"]
    return sh("ip", "netns", "exec", ns, *tool, "-c", "2", "-W", "1", addr, check=False).returncode == 0


def processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def wait_for(predicate: Callable[[], bool], timeout_s: float, what: str) -> float:
    t0 = time.monotonic()
    while not predicate():
        if time.monotonic() - t0 > timeout_s:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.05)
    return time.monotonic() - t0


@pytest.mark.privileged
def test_daemon_runs_in_its_namespace_or_where_its_words_enter(run_dir: Path) -> None:
    """In the network namespace named, or in the namespaces `enter` puts it into (a node's, as a router's daemons)."""
    ns = f"vtopo-p{SUFFIX}"
    pid_file, ready, marker = run_dir / "d.pid", run_dir / "d.ready", run_dir / "netns"
    sh("ip", "netns", "add", ns)
    pid = 0
    try:
        pid = start_daemon(fake_daemon(pid_file, ready, str(marker)), ns, pid_file, ready, 10)
        assert marker.read_text() == os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
        assert os.stat(f"/run/netns/{ns}").st_ino == os.stat(f"/proc/{pid}/ns/net").st_ino
        stop_process(pid, str(pid_file), netns=ns)
        pid = start_daemon(fake_daemon(pid_file, ready, str(marker)), ns, pid_file, ready, 10,
                           enter=("nsenter", f"--net=/run/netns/{ns}", f"--uts=/proc/{os.getpid()}/ns/uts", "--"))
        assert os.stat(f"/run/netns/{ns}").st_ino == os.stat(f"/proc/{pid}/ns/net").st_ino
    finally:
        if pid:
            stop_process(pid, str(pid_file))
        sh("ip", "netns", "del", ns, check=False)


# -- FRR ---------------------------------------------------------------------------------------
FRR_DIR = Path("/usr/lib/frr")
FRR_RUN = Path("/var/run/frr")  # ospfd writes FRR_RUN/ospfd-gr.json whatever -i/-z/--vty_socket say


def frr_node(ns: str) -> tuple[str, ...]:
    """Words that start a daemon in network namespace `ns` and a mount namespace of its own where FRR's hard-coded
    paths (crash-log directories in /var/tmp/frr, /var/run/frr/ospfd-gr.json) are empty tmpfs, as in a node."""
    private = " && ".join(f"mount -t tmpfs tmpfs {path}" for path in ("/var/tmp", FRR_RUN) if Path(path).is_dir())
    return ("ip", "netns", "exec", ns, "unshare", "--mount", "--propagation", "slave", "sh", "-c",
            f'{private or ":"} && exec "$@"', "frr-node")


def frr_available() -> str | None:
    if not (FRR_DIR / "zebra").exists() or not (FRR_DIR / "ospfd").exists() or not shutil.which("vtysh"):
        return "needs FRR (zebra, ospfd, vtysh): apt-get install frr"
    try:
        pwd.getpwnam("frr")
    except KeyError:
        return "needs the frr user that the frr package creates"
    return None


def frr_argv(daemon: str, rdir: Path) -> list[str]:
    """The verified argv: everything per router, no TCP vty, FRR's own unprivileged user."""
    return [
        str(FRR_DIR / daemon),
        "-d",  # FRR's -d parent exits only once the child has read its config and opened its sockets
        "-u", "frr", "-g", "frr",  # -u root fails: "user(root) is not part of vty group (frrvty)"
        "-f", str(rdir / f"{daemon}.conf"),
        "-i", str(rdir / f"{daemon}.pid"),
        "-z", str(rdir / "zserv.api"),
        "--vty_socket", str(rdir),  # a directory: FRR creates DIR/<daemon>.vty
        "-P", "0",  # no TCP vty (the default would listen on 2601/2604)
        "--log", f"file:{rdir / f'{daemon}.log'}",
    ]


def vtysh(rdir: Path, command: str) -> subprocess.CompletedProcess[str]:
    """--config_dir keeps vtysh off /etc/frr: the system vtysh.conf says integrated config, so a
    `write` would save to /etc/frr/frr.conf. With an empty vtysh.conf in the router dir, a `write`
    makes each daemon save its own -f file."""
    return sh("vtysh", "--vty_socket", str(rdir), "--config_dir", str(rdir), "-c", command, check=False)


ZEBRA_CONF = """\
hostname {name}
ip forwarding
!
"""

# Quagga-style config (passive-interface under router ospf, broadcast link, default timers)
# versus the fast one: point-to-point on the veth (no DR election wait = dead interval) and
# `timers lsa min-arrival 0` (the default 1000 ms makes a quickly re-originated LSA be dropped and
# wait for the 5 s retransmit, twice).
OSPFD_CONF = {
    "quagga-style": """\
hostname {name}
!
interface {transit}
 ip ospf hello-interval 1
 ip ospf dead-interval 4
!
router ospf
 ospf router-id {router_id}
 network 10.0.12.0/24 area 0.0.0.0
 network {lan} area 0.0.0.0
 passive-interface lan
 redistribute connected
{extra}!
""",
    "fast": """\
hostname {name}
!
interface {transit}
 ip ospf network point-to-point
 ip ospf hello-interval 1
 ip ospf dead-interval 4
!
interface lan
 ip ospf passive
!
router ospf
 ospf router-id {router_id}
 timers lsa min-arrival 0
 network 10.0.12.0/24 area 0.0.0.0
 network {lan} area 0.0.0.0
 redistribute connected
{extra}!
""",
}


class OspfLab:
    """r1 -- r2 over 10.0.12.0/24; r1 has LAN 10.1.0.0/24 with stub s1, r2 has 10.2.0.0/24 with s2."""

    def __init__(self, base: Path):
        self.prefix = f"vtopo-f{SUFFIX}"
        self.base = base
        self.namespaces: list[str] = []
        self.daemons: list[tuple[int, str]] = []  # (pid, cmdline part)

    def ns(self, name: str) -> str:
        return f"{self.prefix}-{name}"

    def rdir(self, router: str) -> Path:
        return self.base / router

    def build(self) -> None:
        for name in ("r1", "r2", "s1", "s2"):
            sh("ip", "netns", "add", self.ns(name))
            self.namespaces.append(self.ns(name))
            sh("ip", "-n", self.ns(name), "link", "set", "lo", "up")
        links = [("r1", "to-r2", "10.0.12.1/24", "r2", "to-r1", "10.0.12.2/24"),
                 ("r1", "lan", "10.1.0.1/24", "s1", "eth0", "10.1.0.2/24"),
                 ("r2", "lan", "10.2.0.1/24", "s2", "eth0", "10.2.0.2/24")]
        for a, a_if, a_ip, b, b_if, b_ip in links:
            # create with both ends already in their namespaces: nothing transits the host's names
            sh("ip", "-n", self.ns(a), "link", "add", a_if, "type", "veth", "peer", "name", b_if,
               "netns", self.ns(b))
            for ns, ifname, ip in ((a, a_if, a_ip), (b, b_if, b_ip)):
                sh("ip", "-n", self.ns(ns), "addr", "add", ip, "dev", ifname)
                sh("ip", "-n", self.ns(ns), "link", "set", ifname, "up")
        sh("ip", "-n", self.ns("s1"), "route", "add", "default", "via", "10.1.0.1")
        sh("ip", "-n", self.ns("s2"), "route", "add", "default", "via", "10.2.0.1")

    def write_configs(self, style: str) -> None:
        frr = pwd.getpwnam("frr")
        self.base.chmod(0o755)  # frr must traverse it (mkdtemp makes 0700)
        for router, other, lan, extra in (
            ("r1", "r2", "10.1.0.0/24", " default-information originate always\n"),
            ("r2", "r1", "10.2.0.0/24", ""),
        ):
            rdir = self.rdir(router)
            rdir.mkdir(parents=True)
            (rdir / "zebra.conf").write_text(ZEBRA_CONF.format(name=router))
            (rdir / "vtysh.conf").write_text("")  # for vtysh --config_dir: not integrated
            (rdir / "ospfd.conf").write_text(OSPFD_CONF[style].format(
                name=router, transit=f"to-{other}", router_id=f"10.0.0.{router[1]}", lan=lan, extra=extra))
            for path in (rdir, rdir / "zebra.conf", rdir / "ospfd.conf"):
                os.chown(path, frr.pw_uid, frr.pw_gid)  # FRR reads config and writes pid/sockets as frr

    def start(self, router: str, daemon: str) -> int:
        rdir = self.rdir(router)
        pid = start_daemon(
            frr_argv(daemon, rdir), self.ns(router), rdir / f"{daemon}.pid", rdir / f"{daemon}.vty",
            timeout_s=15, log_file=rdir / f"{daemon}.log",
            enter=frr_node(self.ns(router)),
        )
        self.daemons.append((pid, str(rdir / f"{daemon}.conf")))
        return pid

    def stop_daemons(self) -> None:
        for pid, part in reversed(self.daemons):  # ospfd before zebra
            stop_process(pid, part)
        self.daemons.clear()

    def destroy(self) -> None:
        try:
            self.stop_daemons()
        finally:
            for ns in self.namespaces:
                sh("ip", "netns", "del", ns, check=False)


@pytest.fixture
def ospf_lab() -> Iterator[OspfLab]:
    reason = frr_available()
    if reason:
        pytest.skip(reason)
    def host_frr_state() -> tuple[list[str] | None, ...]:
        return tuple(sorted(os.listdir(d)) if os.path.isdir(d) else None for d in ("/var/tmp/frr", FRR_RUN))

    host_before = host_frr_state()
    base = Path(tempfile.mkdtemp(prefix="vtopo-frr-"))
    lab = OspfLab(base)
    try:
        yield lab
    finally:
        try:
            lab.destroy()
        finally:
            shutil.rmtree(base, ignore_errors=True)
    # nothing of ours is left: no process, namespace, file, nor anything in the host's FRR dirs
    assert processes_mentioning(str(base)) == []
    assert not any(ns.startswith(lab.prefix) for ns in sh("ip", "netns", "list").stdout.split())
    assert not base.exists()
    assert host_frr_state() == host_before


@pytest.mark.privileged
@pytest.mark.parametrize("style", ["fast", "quagga-style"])
def test_frr_ospf_two_routers_converge(ospf_lab: OspfLab, style: str) -> None:
    lab = ospf_lab
    lab.build()
    lab.write_configs(style)
    for router in ("r1", "r2"):
        lab.start(router, "zebra")
    # `ip forwarding` in zebra.conf sets the namespace's own sysctl
    assert sh("ip", "netns", "exec", lab.ns("r1"), "sysctl", "-n", "net.ipv4.ip_forward").stdout.strip() == "1"

    t0 = time.monotonic()
    for router in ("r1", "r2"):
        lab.start(router, "ospfd")
    r1 = lab.rdir("r1")
    wait_for(lambda: "Full" in vtysh(r1, "show ip ospf neighbor").stdout, 30, "Full adjacency")
    to_full = time.monotonic() - t0
    wait_for(lambda: "proto ospf" in sh("ip", "-n", lab.ns("r1"), "route", "show", "10.2.0.0/24").stdout,
             30, "10.2.0.0/24 proto ospf in r1")
    to_route = time.monotonic() - t0
    wait_for(lambda: "proto ospf" in sh("ip", "-n", lab.ns("r2"), "route", "show", "default").stdout,
             30, "default route from r1 in r2")
    to_default = time.monotonic() - t0
    print(f"\n[{style}] ospfd start -> Full {to_full:.2f} s, -> r1 route 10.2.0.0/24 {to_route:.2f} s, "
          f"-> r2 default {to_default:.2f} s")

    neighbors = vtysh(r1, "show ip ospf neighbor")
    assert neighbors.returncode == 0, neighbors.stderr
    assert neighbors.stderr == ""
    assert "10.0.0.2" in neighbors.stdout and "Full" in neighbors.stdout
    assert ping(lab.ns("s1"), "10.2.0.2")  # stub to stub through both routers

    # config problems only show in the log (FRR's -d parent still exits 0)
    for router in ("r1", "r2"):
        for daemon in ("zebra", "ospfd"):
            log = (lab.rdir(router) / f"{daemon}.log").read_text()
            assert "No such command" not in log and "Unknown command" not in log, log

    lab.stop_daemons()
    assert processes_mentioning(str(lab.base)) == []
    assert vtysh(r1, "show ip ospf neighbor").returncode != 0  # "ospfd is not running"


@pytest.mark.privileged
def test_frr_start_failure_is_reported(ospf_lab: OspfLab) -> None:
    lab = ospf_lab
    ns = lab.ns("r1")
    sh("ip", "netns", "add", ns)
    lab.namespaces.append(ns)
    lab.write_configs("fast")
    rdir = lab.rdir("r1")
    os.chown(rdir, 0, 0)  # frr can no longer create its pid file there
    with pytest.raises(DaemonError) as info:
        start_daemon(frr_argv("zebra", rdir), ns, rdir / "zebra.pid", rdir / "zebra.vty", 10,
                     log_file=rdir / "zebra.log", enter=frr_node(ns))
    assert "Can't create pid lock file" in str(info.value)


def test_a_nodes_state_is_read_whole_and_a_commands_output_only_at_its_end() -> None:
    """`vtopo save` reads a router's running configuration whole (it kept only the last 4,000 bytes: an output of
    14 kB lost its head), at most SHOWN_BYTES; what a command printed for its messages is read only at its end, so
    that 300 MiB printed by a member's startup command do not pass through the agent's memory."""
    assert run_command(["seq", "1", "3000"], 5, whole=True) == "\n".join(map(str, range(1, 3001)))
    with pytest.raises(CommandFailed, match=f"printed {SHOWN_BYTES + 1:,} bytes, more than the {SHOWN_BYTES:,} a "
                                            "node's state may take"):
        run_command(["head", "-c", str(SHOWN_BYTES + 1), "/dev/zero"], 30, whole=True)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert run_command(["sh", "-c", "head -c 300M /dev/zero; echo; echo the end"], 30).endswith("\nthe end")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 16 << 10, "KiB"


def test_what_a_command_leaves_running_prints_into_a_pipe_drained_as_nobody() -> None:
    """A process a command leaves in the background (`... &`) printing on after the command ended wrote into a deleted
    file of root's in /tmp, and filled the disk as root for as long as it ran; it now prints into the command's pipe,
    which a `cat` of nobody's (the lab's owner's, for a member's lab) reads into /dev/null until it ends."""
    said = run_command(["sh", "-c", "(sleep 0.5; head -c 50M /dev/zero; exec sleep 5) & echo $!"], 10)
    left = int(said)
    time.sleep(1)
    try:
        assert _readers_of_output(left) == ["nobody"]
    finally:
        os.kill(left, 9)
    with pytest.raises(CommandFailed, match="did not end within 1 s"):
        run_command(["sh", "-c", "yes & wait"], 1)


def test_what_a_daemon_prints_goes_into_a_pipe_drained_as_nobody(run_dir: Path) -> None:
    """A daemon's output went into a deleted file of root's in /tmp, which a daemon printing without end filled; it now
    goes into a pipe read only while the start waits, then by a `cat` of nobody's (the lab's owner's, for a member's
    lab) into /dev/null: 50 MiB printed after the daemon was ready all pass, and the daemon runs on."""
    pid_file, ready, printed = run_dir / "d.pid", run_dir / "d.ready", run_dir / "d.pid.printed"
    code = FAKE_DAEMON.replace("time.sleep(120)", "sys.stdout.buffer.write(bytes(50 << 20)); sys.stdout.flush(); "
                                                  "open(pid_file + '.printed', 'w').close(); time.sleep(120)")
    pid = start_daemon(fake_daemon(pid_file, ready, code=code), None, pid_file, ready, timeout_s=10)
    try:
        wait_for(printed.exists, 10, "the daemon's 50 MiB to pass")
        assert process_alive(pid, str(pid_file))
        assert _readers_of_output(pid) == ["nobody"]
    finally:
        stop_process(pid, str(pid_file))


def _readers_of_output(pid: int) -> list[str]:
    """The user of each process that reads the pipe process `pid` prints into (AssertionError when it is no pipe)."""
    output = os.readlink(f"/proc/{pid}/fd/1")
    assert output.startswith("pipe:"), output
    pipe = os.stat(f"/proc/{pid}/fd/1").st_ino
    readers = [int(reader) for reader in os.listdir("/proc") if reader.isdigit() and _reads_pipe(int(reader), pipe)]
    return [pwd.getpwuid(os.stat(f"/proc/{reader}").st_uid).pw_name for reader in readers]


def _reads_pipe(pid: int, pipe: int) -> bool:
    try:
        return os.stat(f"/proc/{pid}/fd/0").st_ino == pipe
    except OSError:
        return False
