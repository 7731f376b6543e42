"""A member's lab lives in a user namespace of its own: as an attacker would, a member tries to reach the host and
another member's lab from inside their own container, with the kernel's own interfaces (iproute2, raw netlink through
pyroute2, setns, a socket passed in from the host) rather than vtopo's CLI. Each attempt must fail with EPERM (or
EACCES), and the host and the other lab stay as they were.

Members a and b each deploy a lab through a real agent, shared by the module's tests; c is outside the group."""
from __future__ import annotations

import fcntl
import json
import os
import pwd
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_process import Agent
from members import members
from residue import snapshot
from vtopo.host.state import StateStore
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

PROBE = "vtsec-probe0"  # a veth pair the test owns in the host's namespace: the target of attacks on host devices
NS_GET_OWNER_UID = 0xB704


@dataclass
class Labs:
    agent: Agent
    users: dict[str, pwd.struct_passwd]
    a_lab: str
    b_lab: str

    def exec_as(self, user: str, lab: str, node: str, *argv: str, stdin: int | None = None
                ) -> subprocess.CompletedProcess[str]:
        runner = ["runuser", "-u", self.users[user].pw_name, "--"]
        return subprocess.run([*runner, sys.executable, "-m", "vtopo", "exec", lab, node, "--", *argv],
                              env=self.agent.env, capture_output=True, text=True, timeout=60,
                              stdin=stdin if stdin is not None else subprocess.DEVNULL, cwd="/")

    def in_a(self, *argv: str, stdin: int | None = None) -> subprocess.CompletedProcess[str]:
        return self.exec_as("a", self.a_lab, "c1", *argv, stdin=stdin)

    @staticmethod
    def netns(lab: str, node: str) -> str:
        prefix = next(record.prefix for record in StateStore().labs() if record.name == lab)
        return f"/run/netns/{prefix}-{node}"


def _lab_file(directory: Path, name: str) -> Path:
    topology = io.load(TOPOLOGIES / "bridge-veth.vtopo")
    topology.name = name
    path = directory / f"{name}.vtopo"
    io.save(topology, path)
    path.chmod(0o644)
    return path


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Labs]:
    directory = tmp_path_factory.mktemp("labs")
    directory.chmod(0o755)
    before = snapshot()
    subprocess.run(["ip", "link", "add", PROBE, "type", "veth", "peer", "name", "vtsec-probe1"], check=True)
    try:
        with members() as users, Agent.running() as agent:
            deployed = []
            try:
                for user, name in (("a", "sec-a"), ("b", "sec-b")):
                    result = agent.vtopo(users[user].pw_name, "deploy", str(_lab_file(directory, name)))
                    assert result.returncode == 0, result.stderr
                    deployed.append((user, name))
                yield Labs(agent, users, "sec-a", "sec-b")
            finally:
                for user, name in deployed:
                    agent.vtopo(users[user].pw_name, "destroy", name)
    finally:
        subprocess.run(["ip", "link", "del", PROBE], capture_output=True)
    assert snapshot() - before == {}


def _host_links() -> str:
    return subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout


def _b_links(labs: Labs) -> str:
    return subprocess.run(["ip", "-n", Path(labs.netns("sec-b", "c1")).name, "-o", "link"], capture_output=True,
                          text=True, check=True).stdout


# ------------------------------------------------------------ the member is root of their own nodes, and only there

def test_the_netns_belongs_to_the_members_own_user_namespace(labs: Labs) -> None:
    with open(labs.netns("sec-a", "c1"), "rb") as netns:
        owner = bytearray(4)
        fcntl.ioctl(netns.fileno(), NS_GET_OWNER_UID, owner)
    assert int.from_bytes(owner, sys.byteorder) == labs.users["a"].pw_uid


def test_a_member_is_root_of_their_node_with_its_own_hostname_hosts_and_tmp(labs: Labs) -> None:
    said = labs.in_a("sh", "-c", "id -u; awk '{print $2}' /proc/self/uid_map; hostname; "
                     "ip addr add 192.0.2.9/32 dev lo && ip route add 198.51.100.0/24 dev eth0 && "
                     "tc qdisc add dev eth0 root tbf rate 10mbit burst 32k latency 50ms && "
                     "nft add table inet mine && echo configured; "
                     "ping -c1 -W2 c2 >/dev/null && echo reached c2; echo private > /tmp/mine; ls /run")
    assert said.returncode == 0, said.stderr
    assert said.stdout.splitlines() == ["0", str(labs.users["a"].pw_uid), "c1", "configured", "reached c2",
                                        "vtopo-node"], said.stdout + said.stderr
    assert not Path("/tmp/mine").exists()
    elsewhere = labs.exec_as("a", "sec-a", "c2", "sh", "-c", "hostname; cat /tmp/mine || true; grep -w c1 /etc/hosts")
    assert elsewhere.stdout.splitlines() == ["c2", "10.0.0.1\tc1"], elsewhere.stdout + elsewhere.stderr
    assert socket.gethostname() != "c1"


# ------------------------------------------------------------ the namespace escapes

def test_netns_1_is_refused(labs: Labs) -> None:
    host = _host_links()
    said = labs.in_a("ip", "link", "add", "x", "type", "veth", "peer", "name", "vtsec-esc", "netns", "1")
    assert said.returncode != 0 and "Operation not permitted" in said.stderr, said.stderr
    assert _host_links() == host


def test_another_members_namespace_passed_in_is_refused(labs: Labs) -> None:
    before = _b_links(labs)
    with open(labs.netns("sec-b", "c1"), "rb") as theirs:  # world-readable, as /run/netns is
        moved = labs.in_a("ip", "link", "add", "x", "type", "veth", "peer", "name", "y", "netns", "/proc/self/fd/0",
                          stdin=theirs.fileno())
        theirs.seek(0)
        entered = labs.in_a("nsenter", "--net=/proc/self/fd/0", "ip", "link", "del", "eth0", stdin=theirs.fileno())
    assert moved.returncode != 0 and "Operation not permitted" in moved.stderr, moved.stderr
    assert entered.returncode != 0 and "Operation not permitted" in entered.stderr, entered.stderr
    assert _b_links(labs) == before


RAW_NETLINK = r"""
import errno, json, os, sys
from pyroute2 import IPRoute
from pyroute2.netlink import NLM_F_ACK, NLM_F_CREATE, NLM_F_EXCL, NLM_F_REQUEST
from pyroute2.netlink.exceptions import NetlinkError
from pyroute2.netlink.rtnl import RTM_DELLINK, RTM_NEWLINK, RTM_NEWNSID
from pyroute2.netlink.rtnl.ifinfmsg import ifinfmsg
from pyroute2.netlink.rtnl.nsidmsg import nsidmsg

target_index = int(sys.argv[1])
outcome = {}
def attempt(name, message, kind, flags):
    try:
        ipr.nlm_request(message, msg_type=kind, msg_flags=flags)
        outcome[name] = 0
    except NetlinkError as error:
        outcome[name] = error.code
with IPRoute() as ipr:
    nsid = nsidmsg()
    nsid["attrs"] = [("NETNSA_FD", 0), ("NETNSA_NSID", 77)]
    attempt("newnsid", nsid, RTM_NEWNSID, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE)
    delete = ifinfmsg()
    delete["index"] = target_index
    delete["attrs"] = [("IFLA_TARGET_NETNSID", 77)]
    attempt("dellink", delete, RTM_DELLINK, NLM_F_REQUEST | NLM_F_ACK)
    macvlan = ifinfmsg()
    macvlan["attrs"] = [("IFLA_IFNAME", "vtsec-mv"), ("IFLA_LINK", target_index), ("IFLA_LINK_NETNSID", 77),
                        ("IFLA_LINKINFO", {"attrs": [("IFLA_INFO_KIND", "macvlan")]})]
    attempt("macvlan", macvlan, RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL)
print(json.dumps(outcome))
"""


def _raw_netlink_from_a(labs: Labs, target_netns: str, target_index: int) -> dict[str, int]:
    with open(target_netns, "rb") as target:
        said = labs.in_a(sys.executable, "-c", RAW_NETLINK, str(target_index), stdin=target.fileno())
    assert said.returncode == 0, said.stderr
    return json.loads(said.stdout)


def test_target_and_link_netnsid_on_the_host_are_refused(labs: Labs) -> None:
    """RTM_NEWNSID names the host's namespace (the client's own, passed in); deleting the host's probe through
    IFLA_TARGET_NETNSID and a macvlan on it through IFLA_LINK_NETNSID must fail."""
    host = _host_links()
    index = socket.if_nametoindex(PROBE)
    outcome = _raw_netlink_from_a(labs, f"/proc/{os.getpid()}/ns/net", index)
    assert outcome["dellink"] == 1 and outcome["macvlan"] == 1, outcome  # EPERM
    assert _host_links() == host


def test_target_netnsid_on_another_members_node_is_refused(labs: Labs) -> None:
    before = _b_links(labs)
    index = int(subprocess.run(["ip", "-n", Path(labs.netns("sec-b", "c1")).name, "-j", "link", "show", "eth0"],
                               capture_output=True, text=True, check=True).stdout.split('"ifindex":')[1].split(",")[0])
    outcome = _raw_netlink_from_a(labs, labs.netns("sec-b", "c1"), index)
    assert outcome["dellink"] == 1 and outcome["macvlan"] == 1, outcome
    assert _b_links(labs) == before


SOCKET_IOCTLS = r"""
import fcntl, json, socket, struct, sys
probe = sys.argv[1].encode()
host = socket.socket(fileno=0)
outcome = {}
for name, request, payload in (
        ("SIOCSIFFLAGS", 0x8914, struct.pack("16sH14x", probe, 0)),
        ("SIOCSIFADDR", 0x8916, struct.pack("16sH2s4s8x", probe, socket.AF_INET, b"\0\0",
                                            socket.inet_aton("192.0.2.77"))),
        ("SIOCADDRT", 0x890B, bytes(120))):
    try:
        fcntl.ioctl(host.fileno(), request, payload)
        outcome[name] = 0
    except OSError as error:
        outcome[name] = error.errno
host.detach()
print(json.dumps(outcome))
"""


def test_a_socket_of_the_hosts_namespace_passed_in_changes_nothing(labs: Labs) -> None:
    host = _host_links()
    addresses = subprocess.run(["ip", "-o", "addr", "show", PROBE], capture_output=True, text=True).stdout
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as outside:
        said = labs.in_a(sys.executable, "-c", SOCKET_IOCTLS, PROBE, stdin=outside.fileno())
    assert said.returncode == 0, said.stderr
    assert json.loads(said.stdout) == {"SIOCSIFFLAGS": 1, "SIOCSIFADDR": 1, "SIOCADDRT": 1}, said.stdout
    assert _host_links() == host
    assert subprocess.run(["ip", "-o", "addr", "show", PROBE], capture_output=True, text=True).stdout == addresses


def test_setns_mount_and_modules_reach_nothing_of_the_hosts(labs: Labs) -> None:
    mounts = Path("/proc/self/mountinfo").read_text()
    with open(f"/proc/{os.getpid()}/ns/net", "rb") as host_netns:
        entered = labs.in_a("nsenter", "--net=/proc/self/fd/0", "ip", "link", "set", PROBE, "down",
                            stdin=host_netns.fileno())
    assert entered.returncode != 0 and "Operation not permitted" in entered.stderr, entered.stderr
    init = labs.in_a("nsenter", "--mount=/proc/1/ns/mnt", "true")
    assert init.returncode != 0 and "Permission denied" in init.stderr, init.stderr
    mounted = labs.in_a("sh", "-c", "mount -t tmpfs vtsec /mnt && echo mounted in the node")
    assert mounted.stdout.strip() == "mounted in the node", mounted.stderr
    assert "vtsec" not in Path("/proc/self/mountinfo").read_text() and \
        Path("/proc/self/mountinfo").read_text().count("\n") == mounts.count("\n")
    module = labs.in_a(sys.executable, "-c", "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
                       "print(libc.syscall(175, None, 0, b''), ctypes.get_errno())")  # init_module
    assert module.stdout.split() == ["-1", "1"], module.stdout + module.stderr
    raw = labs.in_a(sys.executable, "-c", "import socket; s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); "
                    f"s.bind(({PROBE!r}, 0))")
    assert raw.returncode != 0 and "No such device" in raw.stderr, raw.stderr  # the host's devices are not there


def test_b_cannot_run_anything_in_as_lab(labs: Labs) -> None:
    refused = labs.exec_as("b", "sec-a", "c1", "true")
    assert refused.returncode != 0 and "belongs to" in refused.stderr, refused.stderr
    outsider = subprocess.run(["runuser", "-u", labs.users["c"].pw_name, "--", sys.executable, "-m", "vtopo", "exec",
                               "sec-a", "c1", "--", "true"], env=labs.agent.env, capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL, cwd="/")
    assert outsider.returncode != 0, outsider.stderr
