"""The words that run a program with fewer privileges than vtopo's own (setpriv): as a node's daemons' user, as a
member, as nobody, and the one way to run such a program whose output root then reads, bounded. The ops, the host
layer and the command line share them."""
from __future__ import annotations

import os
import pwd
import subprocess
import sys
import tempfile
from collections.abc import Collection
from dataclasses import dataclass


def drop_privileges(user: str, groups: tuple[str, ...], group: str = "") -> list[str]:
    """setpriv's words that run what follows as `user` (names or ids) and `group` (by default the group named like the
    user), in `groups` alone, with no capability left and none to gain."""
    return ["setpriv", f"--reuid={user}", f"--regid={group or user}",
            f"--groups={','.join(groups)}" if groups else "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]


def as_account(uid: int) -> list[str]:
    """The words that run what follows as the account `uid` with the groups it logs in with, and nothing more (see
    drop_privileges): a command that reads what that user gave with that user's rights alone."""
    account = pwd.getpwuid(uid)
    groups = tuple(str(gid) for gid in os.getgrouplist(account.pw_name, account.pw_gid))
    return drop_privileges(str(uid), groups, str(account.pw_gid))


def python_module_as(user: str, group: str, output_bytes: int, module: str, *words: str,
                     memory_bytes: int = 0) -> list[str]:
    """The command that runs vtopo's `module` (python -m) as `user` and `group` with no other group and no
    capability (drop_privileges), writing no file larger than `output_bytes`, and with `memory_bytes` of address space
    at most when given. The interpreter and the code are this process's own, and it runs in no environment but the
    PYTHONPATH this process was given, if any: as `python -I`, with nothing of its user's or the caller's directory."""
    code_path = [f"PYTHONPATH={os.environ['PYTHONPATH']}"] if os.environ.get("PYTHONPATH") else []
    limits = [f"--fsize={output_bytes}", *([f"--as={memory_bytes}"] if memory_bytes else [])]
    return [*drop_privileges(user, (), group), "prlimit", *limits, "--", "env", "-i", *code_path,
            sys.executable, "-s", "-P", "-m", module, *words]


def owner_or_nobody(uid: int) -> tuple[str, str]:
    """The user and group (ids, as drop_privileges takes them) that run a program on what the account `uid` wrote or
    shaped: that account with its login group, or nobody for root."""
    account = pwd.getpwuid(uid) if uid else pwd.getpwnam("nobody")
    return str(account.pw_uid), str(account.pw_gid)


@dataclass(frozen=True)
class Printed:
    """What a program whose output is bounded ended with: its exit status and the first bytes it printed, one more
    than its bound (`limit`) so that printing too much shows."""
    status: int
    output: bytes
    limit: int

    @property
    def within_limit(self) -> bool:
        return len(self.output) <= self.limit


def run_bounded(command: list[str], output_bytes: int, seconds: float, given: bytes = b"",
                pass_fds: Collection[int] = ()) -> Printed:
    """Run `command`, one that writes no file larger than `output_bytes` (python_module_as makes such), from /, with
    `given` as its input, its errors dropped and no descriptor of this process's but `pass_fds`, and read what it
    printed into a file of this process's, up to output_bytes + 1 bytes. Raises subprocess.TimeoutExpired after
    `seconds`."""
    with tempfile.TemporaryFile() as asked, tempfile.TemporaryFile() as said:
        asked.write(given)
        asked.seek(0)
        done = subprocess.run(command, stdin=asked, stdout=said, stderr=subprocess.DEVNULL, cwd="/",
                              pass_fds=tuple(pass_fds), timeout=seconds, check=False)
        said.seek(0)
        return Printed(done.returncode, said.read(output_bytes + 1), output_bytes)
