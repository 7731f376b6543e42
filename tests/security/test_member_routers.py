"""A member's routers run as the member, inside the lab's user namespace: no FRR text a member wrote, in a lab file or
typed into vtysh, is read by a tool running as root, as the host's `frr` or with a host group (issue: a member reached
root through their own router).

Members a and b each deploy a two-router lab through a real agent, shared by the module's tests. Each attack uses
FRR's and vtysh's own commands (`exit` out of configuration mode, `output file`, `copy FILE running-config`,
`log file`, `log filtered-file`) and the kernel's files (/proc/PID/uid_map, status, pid files)."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from security.members import MembersLabs, deployed_by_each, prefix_of, saved
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

pytestmark = pytest.mark.privileged

COURSE_DAEMONS = ["bfdd", "bgpd", "isisd", "ospf6d", "ospfd", "ripd", "ripngd", "staticd", "zebra"]
WATCHED = ("/etc/frr/daemons", "/etc/frr/frr.conf", "/etc/shadow", "/etc/passwd")
SHADOW_LINE = "root:"  # how /etc/shadow's first line starts: seen in an answer, the file was read


def _router_lab(directory: Path, name: str, r1_config: str = "") -> Path:
    """r1 and r2 on one link, with a container behind each; r1 runs `r1_config` when given (else vtopo's OSPF)."""
    topology = Topology(name=name)
    settings = {"h1": {"default_route": "10.61.1.1"}, "h2": {"default_route": "10.61.3.1"},
                "r1": {"config": r1_config} if r1_config else {}, "r2": {}}
    for node_id, kind in (("h1", "container"), ("r1", "router"), ("r2", "router"), ("h2", "container")):
        topology.add_node(Node(id=node_id, name=node_id, kind=kind, settings=settings[node_id]))
    for link_id, a, b, net in (("l1", ("r1", "eth0"), ("h1", "eth0"), "10.61.1"),
                               ("l2", ("r1", "eth1"), ("r2", "eth1"), "10.61.2"),
                               ("l3", ("r2", "eth0"), ("h2", "eth0"), "10.61.3")):
        topology.add_link(Link(id=link_id, a=Endpoint(*a, Interface(addresses=[f"{net}.1/24"])),
                               b=Endpoint(*b, Interface(addresses=[f"{net}.2/24"]))))
    return saved(topology, directory)


def _fingerprints() -> dict[str, str]:
    return {path: hashlib.sha256(Path(path).read_bytes()).hexdigest() for path in WATCHED if Path(path).exists()}


class Labs(MembersLabs):
    def vtopo(self, user: str, *args: str) -> tuple[int, str]:
        done = self.agent.vtopo(self.users[user].pw_name, *args)
        return done.returncode, done.stdout + done.stderr

    def vtysh(self, user: str, lab: str, *commands: str) -> str:
        words = [word for command in commands for word in ("-c", command)]
        return self.vtopo(user, "exec", lab, "r1", "--", "vtysh", *words)[1]

    def neighbours_full(self, user: str, lab: str) -> bool:
        """Whether r1 has its OSPF neighbour, within the 20 s it may take to form after a deploy or restart."""
        deadline = time.monotonic() + 20
        while "Full" not in self.vtysh(user, lab, "show ip ospf neighbor"):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.5)
        return True

    @staticmethod
    def router_dir(lab: str, router: str = "r1") -> Path:
        return Path(f"/run/vtopo/{prefix_of(lab)}/{router}")

    def zebra(self, lab: str) -> int:
        return int((self.router_dir(lab) / "zebra.pid").read_text())


@pytest.fixture(scope="module")
def labs() -> Iterator[Labs]:
    with deployed_by_each(lambda directory: [("a", _router_lab(directory, "rt-a")),
                                             ("b", _router_lab(directory, "rt-b"))]) as deployed:
        yield Labs(deployed.agent, deployed.users, deployed.directory)


def _daemons_run_as_the_member(labs: Labs) -> None:
    """/proc/<zebra>/uid_map is the lab's: root inside is member a outside, and nothing else; no host group. So for
    every course daemon a router runs."""
    a = labs.users["a"]
    assert sorted(p.stem for p in labs.router_dir("rt-a").glob("*.pid")) == COURSE_DAEMONS
    for pid_file in sorted(labs.router_dir("rt-a").glob("*.pid")):
        pid = int(pid_file.read_text())
        assert Path(f"/proc/{pid}/uid_map").read_text().split() == ["0", str(a.pw_uid), "1"], pid_file.name
        status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        assert status["Uid"].split() == [str(a.pw_uid)] * 4 and status["Groups"].split() == [], pid_file.name
    assert os.stat(labs.router_dir("rt-a")).st_uid == a.pw_uid


def test_a_members_daemons_run_as_the_member_in_the_labs_user_namespace(labs: Labs) -> None:
    _daemons_run_as_the_member(labs)


def test_vtysh_of_a_member_runs_inside_the_node_with_no_host_group(labs: Labs) -> None:
    """`vtopo exec LAB r1 -- vtysh` runs as root of the lab (the member outside), without frrvty or any host group:
    whatever its pager or a shell started from it runs with, the member has anyway."""
    shown = labs.vtopo("a", "exec", "rt-a", "r1", "--", "sh", "-c", "grep -E '^(Uid|Groups)' /proc/self/status; "
                       "vtysh -c 'show running-config' | grep -c hostname")
    assert shown[0] == 0, shown[1]
    assert shown[1].split() == ["Uid:", "0", "0", "0", "0", "Groups:", "1"], shown[1]
    assert labs.neighbours_full("a", "rt-a")


def test_any_daemon_a_member_configures_in_vtysh_already_runs_as_the_member(labs: Labs) -> None:
    """`router rip` and `router bgp` typed into vtysh are taken by ripd and bgpd, which were started with the lab as
    the member: typing starts nothing, as root or otherwise."""
    pids = {p.stem: p.read_text() for p in labs.router_dir("rt-a").glob("*.pid")}
    said = labs.vtysh("a", "rt-a", "configure terminal", "router rip", "network 10.61.2.0/24", "exit",
                      "router bgp 65061", "neighbor 10.61.2.2 remote-as 65062", "end", "show running-config")
    try:
        assert "router rip\n network 10.61.2.0/24" in said and "router bgp 65061\n" in said, said
        assert {p.stem: p.read_text() for p in labs.router_dir("rt-a").glob("*.pid")} == pids
        _daemons_run_as_the_member(labs)
    finally:
        labs.vtysh("a", "rt-a", "configure terminal", "no router rip", "no router bgp 65061", "end")


def test_file_commands_typed_into_vtysh_reach_only_the_routers_own_files(labs: Labs) -> None:
    """`log file` and `log filtered-file` to the host's /etc/frr/daemons (which frr.service sources as root), to
    /etc, and `output file` / `copy` at the host's files: FRR's /etc/frr in the node is the router's own directory,
    and the rest is refused to the member."""
    before = _fingerprints()
    said = labs.vtysh("a", "rt-a", "configure terminal", "log file /etc/frr/daemons",
                      "log filtered-file /etc/frr/frr.conf", "log file /etc/vtopo-attack.log", "end",
                      "debug zebra kernel", "output file /etc/nologin", "copy /etc/shadow running-config")
    assert SHADOW_LINE not in said, said
    assert _fingerprints() == before
    assert not Path("/etc/nologin").exists() and not Path("/etc/vtopo-attack.log").exists()
    assert (labs.router_dir("rt-a") / "daemons").exists()  # where the node's /etc/frr/daemons is
    labs.vtysh("a", "rt-a", "configure terminal", "no log file", "no log filtered-file", "end")


def test_a_configuration_that_leaves_configuration_mode_is_loaded_as_the_member(labs: Labs) -> None:
    """A lab whose router text leaves configuration mode (`exit`) for vtysh's `output file` and `copy`: neither the
    agent's dry run nor the load reads or writes a host file, and no line of /etc/shadow comes back."""
    before = _fingerprints()
    lab = _router_lab(labs.directory, "rt-exit", "hostname r1\n!\nexit\nexit\ncopy /etc/shadow running-config\n"
                                                 "output file /etc/nologin\n")
    for args in (("validate", str(lab)), ("deploy", str(lab))):
        code, said = labs.vtopo("a", *args)
        assert SHADOW_LINE not in said, said
        assert code != 0 and "'copy /etc/shadow running-config', would have FRR write or read a file" in said, said
        if args[0] == "deploy" and code == 0:
            labs.vtopo("a", "destroy", "rt-exit")
    assert _fingerprints() == before and not Path("/etc/nologin").exists()


def test_roots_dry_run_of_a_lab_file_does_not_run_as_root(labs: Labs, tmp_path: Path) -> None:
    """Root validating a lab file someone else wrote: its vtysh dry run runs as nobody, so `copy /etc/shadow` shows
    nothing and `output file` creates nothing."""
    tmp_path.chmod(0o755)
    target = tmp_path / "created-by-output"
    lab = _router_lab(labs.directory, "rt-root-check", f"hostname r1\n!\nexit\ncopy /etc/shadow running-config\n"
                                                       f"output file {target}\n")
    said = labs.agent.vtopo(None, "validate", str(lab))
    assert SHADOW_LINE not in said.stdout + said.stderr and not target.exists(), said.stdout + said.stderr


def test_a_pid_file_the_member_rewrites_stops_no_process_of_anyone_else(labs: Labs) -> None:
    """The router's directory is the member's: a's zebra.pid made to name b's zebra, then a restarts r1. b's zebra
    lives on (the agent stops only a process in r1's own network namespace)."""
    theirs = labs.zebra("rt-b")
    pid_file = labs.router_dir("rt-a") / "zebra.pid"
    os.setegid(labs.users["a"].pw_gid)  # written as member a, as they could from their node's /run/frr
    os.seteuid(labs.users["a"].pw_uid)
    try:
        pid_file.write_text(f"{theirs}\n")
    finally:
        os.seteuid(0)
        os.setegid(0)
    code, said = labs.vtopo("a", "node", "rt-a", "r1", "restart")
    assert code == 0, said
    assert labs.zebra("rt-b") == theirs and "zebra" in Path(f"/proc/{theirs}/cmdline").read_text()


def test_a_fifo_or_symlink_for_a_pid_file_does_not_hold_or_mislead_the_agent(labs: Labs) -> None:
    """A FIFO (which would block a reader forever) and a symlink to /etc/shadow in place of r1's pid files: restarting
    r1 ends in time, and nothing of /etc/shadow is said."""
    directory = labs.router_dir("rt-a")
    os.setegid(labs.users["a"].pw_gid)
    os.seteuid(labs.users["a"].pw_uid)
    try:
        (directory / "zebra.pid").unlink()
        os.mkfifo(directory / "zebra.pid")
        (directory / "ospfd.pid").unlink()
        (directory / "ospfd.pid").symlink_to("/etc/shadow")
    finally:
        os.seteuid(0)
        os.setegid(0)
    code, said = labs.vtopo("a", "node", "rt-a", "r1", "restart")
    assert code == 0 and SHADOW_LINE not in said, said
    assert labs.zebra("rt-a") > 0  # a pid file of its own again, from the restarted zebra


def test_the_other_members_router_is_out_of_reach(labs: Labs) -> None:
    """From a's router, b's router directory is not even there (the node's /run is its own), and a's vtysh reaches
    a's daemons alone."""
    shown = labs.vtopo("a", "exec", "rt-a", "r1", "--", "sh", "-c", f"ls {labs.router_dir('rt-b')} 2>&1; ls /run/frr")
    assert "No such file" in shown[1] and "zebra.vty" in shown[1], shown[1]
    assert labs.neighbours_full("b", "rt-b")


def test_the_daemons_may_write_nothing_of_the_host_but_the_routers_own_directory(labs: Labs) -> None:
    """Inside r1 as its daemons run (zebra's user, mount and network namespaces entered, uid 0 there: member a
    outside), a file in a home directory of a's own is refused as a read-only file system, though a may write there
    outside, and the same file reached through /proc/PID/root of a process of a's on the host is refused too;
    /etc/frr, FRR's directory inside, is the router's own directory and takes a file, and so do /tmp, /run and the
    network namespace's /proc/sys/net (zebra's `ip forwarding` writes there). So no line a daemon takes as a file
    to open reaches the owner's files (a teacher's, when grading)."""
    a = labs.users["a"]
    home = Path(tempfile.mkdtemp(prefix="vtopo-routerfs-", dir="/home"))
    try:
        os.chown(home, a.pw_uid, a.pw_gid)
        inside = ["nsenter", f"--target={labs.zebra('rt-a')}", "--user", "--mount", "--net", "sh", "-c"]
        refused = subprocess.run([*inside, f"echo pwned >> {home}/.bashrc"], capture_output=True, text=True,
                                 check=False)
        assert refused.returncode != 0 and "Read-only file system" in refused.stderr, refused
        with subprocess.Popen(["setpriv", f"--reuid={a.pw_uid}", f"--regid={a.pw_gid}", "--clear-groups", "sleep",
                               "60"]) as outside:  # a process of a's on the host, whose root is the host's own
            try:
                through = subprocess.run([*inside, f"echo pwned >> /proc/{outside.pid}/root{home}/.bashrc"],
                                         capture_output=True, text=True, check=False)
            finally:
                outside.kill()
        assert through.returncode != 0 and "Permission denied" in through.stderr, through
        assert not (home / ".bashrc").exists()
        taken = subprocess.run([*inside, "echo mine > /etc/frr/probe && echo t > /tmp/probe && echo r > /run/probe && "
                                "echo 1 > /proc/sys/net/ipv4/ip_forward"], capture_output=True, text=True, check=False)
        assert taken.returncode == 0, taken
        probe = labs.router_dir("rt-a") / "probe"
        assert probe.read_text() == "mine\n" and probe.stat().st_uid == a.pw_uid
        probe.unlink()
        written = subprocess.run(["setpriv", f"--reuid={a.pw_uid}", f"--regid={a.pw_gid}", "--clear-groups", "sh",
                                  "-c", f"echo mine > {home}/.bashrc"], capture_output=True, text=True, check=False)
        assert written.returncode == 0, written  # the refusal inside was the mount's, not the file's mode
    finally:
        shutil.rmtree(home)
