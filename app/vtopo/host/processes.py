"""Daemons inside network namespaces: start one and wait until it is ready, stop it safely.

Launcher: ``ip netns exec NS argv...`` rather than setns() in a ``preexec_fn``:

* ``preexec_fn`` runs Python between fork and exec, which is unsafe in a multi-threaded process
  (the Qt GUI is one) and disables subprocess's posix_spawn/vfork fast path;
* ``ip netns exec`` also gives the daemon a private mount namespace with /sys remounted for the
  network namespace (so /sys/class/net shows the namespace's own interfaces) and applies
  /etc/netns/NS/ overrides, as any daemon run by hand would see them;
* it execs in place: the launcher's pid is the daemon's (pre-fork) pid, and a daemon that stays
  in the foreground stays our child.

A daemon is identified by its pid *and* a part of its command line (typically its unique config
or pid file path), so a recycled pid is never signalled.

Verified with FRR 8.4 (zebra, ospfd): run as the ``frr`` user (FRR refuses ``-u root`` unless
root is in the ``frrvty`` group), in a run directory owned by frr; FRR's ``-d`` parent exits 0 only
once the child has read its config and opened its sockets, and non-zero if it failed. FRR also
writes to hard-coded paths whatever its options say: /var/tmp/frr/<daemon>.<pid>/ (crash-log dir,
removed on a clean exit only) and /var/run/frr/ospfd-gr.json: a router's daemons start inside its
node (`enter`), whose /var/tmp and /run are its own.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import select
import shlex
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from vtopo.host import owned_files
from vtopo.host.errors import HostError
from vtopo.host.owned_files import DAEMON_UMASK
from vtopo.model.rules import NETNS_DIR
from vtopo.privileges import drop_privileges, owner_or_nobody

_TAIL_BYTES = 4000
_CHUNK_BYTES = 1 << 16
_PAUSE_AFTER_BYTES = 1 << 20  # a command's output is read at most this much at a time, then a pause: ~100 MB/s
SHOWN_BYTES = 16 << 20
"""The most a command that shows a node's state (a router's running configuration) may print: it is read whole."""
_POLL_S = 0.02

class DaemonError(HostError):
    """A daemon did not start (or could not be stopped). Carries what it said."""

    def __init__(self, message: str, output: str = ""):
        self.output = output
        super().__init__(f"{message}\n--- daemon output ---\n{output}" if output.strip() else message)


# -- inspection --------------------------------------------------------------------------------
def _cmdline(pid: int) -> str | None:
    """The process's argv joined by spaces; None if it is gone or a zombie.

    Right after exec() the kernel shows the new process (new comm, state R) with an empty
    cmdline for a moment, until the loader has set up its arguments; a parent that vfork()ed
    (Python's subprocess does) is already running then. So an empty cmdline of a live process is
    read again for a while rather than taken as "not our process".
    """
    deadline = time.monotonic() + 0.5
    while True:
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            return None
        if raw:
            return raw.rstrip(b"\0").replace(b"\0", b" ").decode(errors="replace")
        if _is_zombie(pid) or time.monotonic() > deadline:
            return None  # zombie, or a kernel thread
        time.sleep(0.002)


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    # "pid (comm) S ...": comm may contain spaces and parentheses, so split at the last ")".
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


# Launchers that are still running when start_daemon returns, kept so that they are reaped by us and not
# reported as leaked by Popen.__del__: a daemon that stays in the foreground, or the parent half of one that
# detaches itself (FRR's -d parent exits a moment after the child is ready).
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


def _reap() -> None:
    """Collect the exit status of every launcher start_daemon left as our child that has ended, so that a
    long-lived caller (the agent) keeps no zombie: once per start and per stop, not in the loops that wait for
    processes to end (a zombie counts as gone there). Other children of the caller are left alone (their Popen
    owns the status)."""
    for pid, child in list(_CHILDREN.items()):
        if child.poll() is not None:
            del _CHILDREN[pid]


def process_alive(pid: int, expected_cmdline_part: str) -> bool:
    """True if `pid` runs (not a zombie) and its command line contains `expected_cmdline_part`."""
    if pid <= 0:
        return False
    cmdline = _cmdline(pid)
    return cmdline is not None and expected_cmdline_part in cmdline and not _is_zombie(pid)


# -- stop ----------------------------------------------------------------------------------------
def stop_process(pid: int, expected_cmdline_part: str, timeout_s: float = 5, *, netns: str | None = None) -> None:
    """SIGTERM the process, wait up to `timeout_s`, then SIGKILL. Already gone is fine.

    The process is only signalled if its /proc/PID/cmdline contains `expected_cmdline_part` and, with `netns`, it
    runs in that network namespace (its pid came from a file the lab's own user may write).
    The check and the signals go through a pidfd, so a pid recycled between the check and the
    kill cannot be hit. Raises DaemonError if the process survives SIGKILL.
    """
    if pid <= 0:
        raise ValueError(f"bad pid {pid}")
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        # The pidfd pins this very process: if the cmdline matches now, every signal below
        # reaches it or fails with ProcessLookupError, never a newcomer with the same pid.
        if not process_alive(pid, expected_cmdline_part) or (netns is not None and not runs_in(pid, netns)):
            return
        for sig, wait_s in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, max(timeout_s, 2.0))):
            try:
                signal.pidfd_send_signal(pidfd, sig)
            except ProcessLookupError:
                return
            if _wait_ended([pidfd], wait_s):
                return
        raise DaemonError(f"process {pid} ({expected_cmdline_part}) survived SIGKILL")
    finally:
        os.close(pidfd)
        _reap()


def runs_in(pid: int, netns: str) -> bool:
    """Whether process `pid` is in the network namespace kept at /run/netns/NETNS."""
    try:
        theirs, kept = os.stat(f"/proc/{pid}/ns/net"), os.stat(f"{NETNS_DIR}/{netns}")
    except OSError:
        return False
    return (theirs.st_dev, theirs.st_ino) == (kept.st_dev, kept.st_ino)


def signal_each(pids: Sequence[int], sig: signal.Signals) -> None:
    """Send `sig` to each process still there, through a pidfd (a process that is gone is skipped)."""
    for pidfd in _pidfds(pids):
        try:
            signal.pidfd_send_signal(pidfd, sig)
        except ProcessLookupError:
            pass
        finally:
            os.close(pidfd)


def kill_each(pids: Sequence[int], timeout_s: float = 5) -> None:
    """SIGKILL each process (stopped ones too) and wait until they are gone or zombies."""
    pidfds = _pidfds(pids)
    try:
        for pidfd in pidfds:
            try:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _wait_ended(pidfds, timeout_s)
    finally:
        for pidfd in pidfds:
            os.close(pidfd)
    _reap()


def _pidfds(pids: Sequence[int]) -> list[int]:
    """A pidfd for each of `pids` that still exists."""
    pidfds = []
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            pidfds.append(os.pidfd_open(pid))
    return pidfds


def _wait_ended(pidfds: Sequence[int], timeout_s: float) -> bool:
    """Whether each process behind `pidfds` ended (gone, or a zombie) within `timeout_s`: a pidfd turns readable
    as its process ends, so the wait wakes then rather than at the next turn of a poll loop."""
    waiting = select.poll()
    for pidfd in pidfds:
        waiting.register(pidfd, select.POLLIN)
    left = set(pidfds)
    deadline = time.monotonic() + timeout_s
    while left:
        remaining_s = deadline - time.monotonic()
        if remaining_s <= 0:
            return False
        for pidfd, _ in waiting.poll(remaining_s * 1000):
            left.discard(pidfd)
            waiting.unregister(pidfd)
    return True


def wait_child(process: subprocess.Popen[bytes], timeout_s: float) -> int | None:
    """The exit status of our child `process` once it ends, waited for on a pidfd (woken as it ends, where
    Popen.wait with a timeout polls, sleeping up to 50 ms at a time); None when it still runs after `timeout_s`."""
    try:
        pidfd = os.pidfd_open(process.pid)
    except ProcessLookupError:  # reaped already
        return process.wait()
    try:
        if not _wait_ended([pidfd], timeout_s):
            return None
    finally:
        os.close(pidfd)
    return process.wait()


class CommandFailed(HostError):
    """A command that exited non-zero or ran too long; the message holds the end of what it printed."""


def run_command(argv: Sequence[str], timeout_s: float, cwd: str | None = None, whole: bool = False,
                owner: int = 0) -> str:
    """Run a command (in `cwd`, when given) to its end and return what it printed (stdout and stderr together): its
    last lines, or with `whole` all of it (what shows a node's state), at most SHOWN_BYTES; a non-zero exit raises
    CommandFailed. `owner`: the uid whose lab the command runs in (see run_to_end)."""
    code, said = run_to_end(argv, timeout_s, cwd, whole, owner)
    if code != 0:
        raise CommandFailed(f"exited with status {code}" + (f": {said[-_TAIL_BYTES:]}" if said else ""))
    return said


def run_to_end(argv: Sequence[str], timeout_s: float, cwd: str | None = None, whole: bool = False,
               owner: int = 0) -> tuple[int, str]:
    """Run a command (in `cwd`, when given) to its end and return its exit status and what it printed (stdout and
    stderr together): its last lines, or with `whole` all of it, at most SHOWN_BYTES (CommandFailed past that);
    CommandFailed when it runs longer than `timeout_s`.

    The output comes through a pipe, read while the command runs, with a pause after each MiB: a command printing
    without end waits on its pipe, and takes neither much of the caller's time nor any disk. A process it
    leaves running in the background (`... &`) may hold the pipe after it ended: what that prints is read by a `cat`
    of the lab's `owner`'s (nobody's for root's labs), without privileges, into /dev/null until it ends, so that it is
    neither blocked nor kept anywhere.
    """
    kept = SHOWN_BYTES if whole else _TAIL_BYTES
    reading, writing = os.pipe2(os.O_CLOEXEC)
    try:
        process = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=writing, stderr=subprocess.STDOUT,
                                   start_new_session=True, close_fds=True, cwd=cwd)
    except BaseException:
        os.close(reading)
        raise
    finally:
        os.close(writing)
    output, printed, unpaused, held, ended, wait_ms = bytearray(), 0, 0, True, False, _POLL_S * 1000
    poller = select.poll()
    poller.register(reading, select.POLLIN)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() <= deadline:
        if poller.poll(wait_ms):
            chunk = os.read(reading, _CHUNK_BYTES)
            if not chunk:
                held = False
                break
            printed, unpaused = printed + len(chunk), unpaused + len(chunk)
            output += chunk
            del output[:-kept]
            if unpaused >= _PAUSE_AFTER_BYTES:
                time.sleep(_POLL_S / 2)
                unpaused = 0
            continue
        if ended:  # and its pipe emptied since: only what it left running holds it
            break
        ended = process.poll() is not None
        wait_ms = 0 if ended else wait_ms
    try:
        code: int | None = process.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # its session: what it started is part of what did not end
        process.wait()
        code = None
    if held:
        _drained(reading, owner)
    else:
        os.close(reading)
    said = output.decode(errors="replace").rstrip("\n")
    if code is None:
        raise CommandFailed(f"did not end within {timeout_s:g} s (end a command that starts a server with `&`)"
                            + (f"; it printed: {said[-_TAIL_BYTES:]}" if said else ""))
    if whole and printed > kept:
        raise CommandFailed(f"printed {printed:,} bytes, more than the {SHOWN_BYTES:,} a node's state may take")
    return code, said


def _drained(reading: int, owner: int) -> None:
    """Hand the read end of a command's pipe, which a process it left behind still holds, to a `cat` of `owner`'s
    (nobody's for root) that reads it into /dev/null until that process ends; reaped by a thread of its own."""
    user, group = owner_or_nobody(owner)
    try:
        drain = subprocess.Popen([*drop_privileges(user, (), group), "cat"],
                                 stdin=reading, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 start_new_session=True, close_fds=True, cwd="/")
    finally:
        os.close(reading)
    threading.Thread(target=drain.wait, name="output drain", daemon=True).start()


# -- start ---------------------------------------------------------------------------------------

def _read_pid(pid_file: Path) -> int | None:
    try:
        text = owned_files.read_small_file(pid_file).strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _tail(data: bytes, limit: int = _TAIL_BYTES) -> str:
    return data[-limit:].decode(errors="replace")


def _end_of(file: IO[bytes], limit: int = _TAIL_BYTES) -> str:
    """The last `limit` bytes of what a process wrote into `file` so far, read without the rest."""
    file.seek(max(0, os.fstat(file.fileno()).st_size - limit))
    return _tail(file.read(limit), limit)


def _file_tail(path: Path | None) -> str:
    if path is None:
        return ""
    try:
        with os.fdopen(owned_files.open_to_read(path), "rb") as fh:
            return f"--- {path} ---\n" + _end_of(fh)
    except OSError:
        return ""


def _launcher(netns: str | None, enter: Sequence[str], open_files: Mapping[int, Path],
              inherited: Mapping[int, int]) -> list[str]:
    argv = list(enter) or (["ip", "netns", "exec", netns] if netns is not None else [])
    if open_files or inherited:  # the shell puts each file on its fd, as in `qemu ... 3<>/dev/tap7`, then becomes
        # the daemon; a descriptor vtopo opened itself moves to its number (`20<&5 5<&-`)
        redirects = [f"{fd}<>{shlex.quote(str(path))}" for fd, path in sorted(open_files.items())]
        redirects += [f"{fd}<&{ours} {ours}<&-" for fd, ours in sorted(inherited.items())]
        argv += ["bash", "-c", f'exec "$@" {" ".join(redirects)}', "vtopo-fds"]  # dash takes fds 0-9 only
    return argv


def _greets(path: Path, banner: bytes, timeout_s: float) -> bool:
    """The unix socket at `path` accepts a connection and says `banner` first (QEMU's QMP greeting comes once QEMU
    has set the whole machine up and runs its main loop)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(timeout_s)
        try:
            client.connect(str(path))
            said = b""
            while len(said) < len(banner) and (more := client.recv(len(banner) - len(said))):
                said += more
        except OSError:
            return False
    return said == banner


def _above_targets(inherited: Mapping[int, int]) -> dict[int, int]:
    """Copies of our descriptors numbered above every target, so moving one to its number never overwrites another
    still to move (`3<&4 4<&-` then `4<&3` would lose one)."""
    floor = max(inherited, default=0) + 1
    return {fd: fcntl.fcntl(ours, fcntl.F_DUPFD_CLOEXEC, floor) for fd, ours in inherited.items()}


def start_daemon(
    argv: list[str],
    netns: str | None,
    pid_file: Path,
    ready: Path | None,
    timeout_s: float,
    *,
    log_file: Path | None = None,
    open_files: Mapping[int, Path] | None = None,
    inherited_fds: Mapping[int, int] | None = None,
    privileges: Sequence[str] = (),
    umask: int = DAEMON_UMASK,
    ready_banner: bytes = b"",
    cwd: Path | None = None,
    enter: Sequence[str] = (),
    owner: int = 0,
) -> int:
    """Start a daemon (in network namespace `netns`, or in the namespaces the words `enter` put it into) and return
    its pid once it is ready.

    Ready means: `pid_file` holds the pid of a live process whose command line holds the name of
    ``argv[0]``, and the `ready` path (e.g. a vty socket) exists. The daemon may detach itself
    (``-d``) or stay in the foreground; either way the pid returned is the one in `pid_file`.

    A stale `pid_file` or `ready` left by a previous run is removed first; a live daemon with the
    same pid file is an error. `open_files` maps a
    file descriptor number to a file the daemon gets open read-write on it (QEMU's macvtap `fd=3`).
    `inherited_fds` maps a file descriptor number of the daemon to a descriptor of ours it gets there (a disk
    image or a tap vtopo opened itself). `privileges` is the command that drops them (setpriv's words), run once
    every file is open, right before the daemon; `umask` is the daemon's. With `ready_banner`, `ready` is a unix
    socket that must say it first. `cwd` is its working directory (where a relative file name it is given lands).

    On failure or timeout raises DaemonError with the tail of the daemon's stdout/stderr and of
    `log_file`; whatever was started is stopped again. The daemon's stdout/stderr go into a pipe,
    read here only while the start is waited for; then a `cat` of `owner`'s, the uid whose lab the
    daemon runs in (nobody's for root's labs), reads it into /dev/null for as long as the daemon
    holds it (see run_to_end): what it prints is kept nowhere, so a daemon that stays in the
    foreground should log to a file of its own rather than to stdout.
    """
    if not argv:
        raise ValueError("empty argv")
    _reap()
    pid_file = Path(pid_file)
    ready = Path(ready) if ready is not None else None
    name = Path(argv[0]).name  # what the daemon's cmdline holds even if it rewrites the rest
    old = _read_pid(pid_file)
    if old is not None and process_alive(old, " ".join(argv)) and (netns is None or runs_in(old, netns)):
        raise DaemonError(f"{argv[0]} already running as pid {old} (pid file {pid_file})")
    pid_file.unlink(missing_ok=True)
    if ready is not None and not ready.is_dir():
        ready.unlink(missing_ok=True)

    inherited = _above_targets(inherited_fds or {})
    command = _launcher(netns, enter, dict(open_files or {}), inherited) + [*privileges, *argv]
    output = _StartOutput()
    try:
        try:
            proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=output.writing,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # no terminal signals from us; survives our process group
                close_fds=True,
                pass_fds=tuple(inherited.values()),
                umask=umask,
                cwd=cwd,
            )
        finally:
            output.started()
            for copy in inherited.values():
                os.close(copy)

        def fail(reason: str) -> DaemonError:
            output.take(0)
            return DaemonError(
                f"{argv[0]}{f' in netns {netns}' if netns else ''}: {reason}",
                "\n".join(part for part in (_tail(output.tail), _file_tail(log_file)) if part.strip()),
            )

        deadline = time.monotonic() + timeout_s
        while True:
            rc = proc.poll()
            pid = _read_pid(pid_file)
            if pid is not None and process_alive(pid, name):
                if ready is None or (_greets(ready, ready_banner, _POLL_S * 25) if ready_banner else ready.exists()):
                    if proc.poll() is None:
                        _CHILDREN[proc.pid] = proc
                    return pid
            elif rc is not None and rc != 0:
                raise fail(f"exited with status {rc} before it was ready")
            elif rc is not None and pid is not None:
                raise fail(f"pid {pid} from {pid_file} is not running")
            if time.monotonic() > deadline:
                error = fail(
                    f"not ready after {timeout_s:g} s (pid file {pid_file}"
                    + (f", ready path {ready})" if ready is not None else ")")
                )
                if pid is not None:
                    stop_process(pid, name, timeout_s=2)
                if proc.poll() is None:
                    proc.kill()  # our own child: the launcher or the daemon itself
                proc.wait()
                raise error
            output.take(_POLL_S)
    finally:
        output.hand_over(owner)


class _StartOutput:
    """The pipe a starting daemon prints into (stdout and stderr): read only while its start is waited for, keeping
    its last lines to say why a start failed, then handed to a drain of the lab's owner's (`_drained`), so that what a
    daemon prints for as long as it runs is neither blocked nor kept anywhere."""

    def __init__(self) -> None:
        self.reading, self.writing = os.pipe2(os.O_CLOEXEC)
        self.tail = b""
        self.open = True  # some process still holds the writing end
        self._poller = select.poll()
        self._poller.register(self.reading, select.POLLIN)

    def started(self) -> None:
        """The daemon holds the writing end now (or did not start): ours is closed, so the pipe ends with it."""
        os.close(self.writing)

    def take(self, timeout_s: float) -> None:
        """Read what was printed for `timeout_s` (at least what the pipe holds now), keeping the last _TAIL_BYTES;
        once a mebibyte was read, only wait out the rest of the time, so that a daemon printing without end takes
        little of the starter's time."""
        deadline, taken = time.monotonic() + timeout_s, 0
        while self.open and taken < _PAUSE_AFTER_BYTES \
                and self._poller.poll(max(0.0, deadline - time.monotonic()) * 1000):
            chunk = os.read(self.reading, _CHUNK_BYTES)
            self.open, taken, self.tail = bool(chunk), taken + len(chunk), (self.tail + chunk)[-_TAIL_BYTES:]
        time.sleep(max(0.0, deadline - time.monotonic()))

    def hand_over(self, owner: int) -> None:
        """The reading end to a drain run as `owner` (nobody for root) while a process holds the pipe; closed else."""
        if self.open:
            _drained(self.reading, owner)
        else:
            os.close(self.reading)
