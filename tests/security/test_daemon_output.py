"""What a daemon of a member's lab prints is kept nowhere: it goes into a pipe that a `cat` of the member's reads into
/dev/null for as long as the daemon runs. It went into an unlinked file of root's in /tmp, which a daemon printing
without end filled as root.

Member a deploys, through a real agent, a container whose DHCP client asks where nothing answers, then puts in the
client's place, in a's own DHCP directory, a lease script that prints PRINTED_MIB once and then says so: udhcpc runs
it after each round of DISCOVERs that went unanswered, its output udhcpc's own."""
from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from security.members import MembersLabs, deployed_by_each, prefix_of, saved
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology
from vtopo_kinds.dhcp import CLIENT_SCRIPT, INSIDE

pytestmark = pytest.mark.privileged

LAB = "printing"
PRINTED_MIB = 512
PRINTED_WITHIN_S = 60  # udhcpc runs its script after a round of three DISCOVERs, a second apart, then 2 s of rest
PRINTING_SCRIPT = f"""#!/bin/sh
[ -e {INSIDE}/printed ] && exit 0
head -c {PRINTED_MIB}M /dev/zero
touch {INSIDE}/printed
"""


def _asking_client() -> Topology:
    """A container asking for an address by DHCP on a bridge where nothing serves it."""
    topology = Topology(name=LAB)
    topology.add_node(Node(id="br", name="br", kind="bridge", settings={"forward_delay": 0.0}))
    topology.add_node(Node(id="c1", name="c1", kind="container"))
    topology.add_link(Link(id="l1", a=Endpoint("c1", "eth0", Interface(dhcp=True)), b=Endpoint("br", "p1")))
    return topology


@pytest.fixture(scope="module")
def labs() -> Iterator[MembersLabs]:
    with deployed_by_each(lambda directory: [("a", saved(_asking_client(), directory))]) as deployed:
        yield deployed


def _used_bytes(path: str) -> int:
    """What the file system holding `path` has in use."""
    about = os.statvfs(path)
    return (about.f_blocks - about.f_bfree) * about.f_frsize


def _readers_of(pipe: int) -> list[int]:
    """The uid of each process whose stdin is the pipe `pipe` (by inode)."""
    readers = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.stat(f"/proc/{pid}/fd/0").st_ino == pipe:
                readers.append(os.stat(f"/proc/{pid}").st_uid)
        except OSError:
            continue
    return readers


def test_a_members_daemon_printing_without_end_fills_no_file_of_roots_and_is_not_blocked(labs: MembersLabs) -> None:
    """udhcpc's script prints PRINTED_MIB and then leaves its mark: it did (nothing blocked it), udhcpc still runs, its
    output is a pipe read by member a's processes alone, and root's /tmp took less than a tenth of what was printed."""
    a = labs.users["a"]
    directory = Path(f"/run/vtopo/{prefix_of(LAB)}/c1.dhcp")
    [pid_file] = directory.glob("udhcpc-*.pid")
    udhcpc = int(pid_file.read_text())
    before = _used_bytes(tempfile.gettempdir())
    planted = labs.agent.run_as(a.pw_name, "sh", "-c", 'printf %s "$1" > "$2.new" && chmod 755 "$2.new" && '
                                'mv -f "$2.new" "$2"', "plant", PRINTING_SCRIPT, str(directory / CLIENT_SCRIPT))
    assert planted.returncode == 0, planted.stderr
    deadline = time.monotonic() + PRINTED_WITHIN_S
    while not (directory / "printed").exists():
        assert time.monotonic() < deadline, f"the script did not print {PRINTED_MIB} MiB within {PRINTED_WITHIN_S} s"
        time.sleep(0.2)
    grown = _used_bytes(tempfile.gettempdir()) - before
    output = os.readlink(f"/proc/{udhcpc}/fd/1")
    assert Path(f"/proc/{udhcpc}").exists() and output.startswith("pipe:"), output
    assert _readers_of(os.stat(f"/proc/{udhcpc}/fd/1").st_ino) == [a.pw_uid]
    assert grown < (PRINTED_MIB << 20) // 10, f"{tempfile.gettempdir()} took {grown >> 20} MiB"
