"""A member's lab lives in a user namespace of its own: as an attacker would, a member tries to reach the host and
another member's lab from inside their own container, with the kernel's own interfaces (iproute2, raw netlink through
pyroute2, setns, a socket passed in from the host) rather than vtopo's CLI. Each attempt must fail with EPERM (or
EACCES), and the host and the other lab stay as they were.

Members a and b each deploy a lab through a real agent, shared by the module's tests; c is outside the group."""
from __future__ import annotations

import errno
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_process import Agent
from members import members
from residue import snapshot
from security.attacks import INIT_MODULE, RAW_NETLINK, REFUSED, owning_userns
from vtopo.host.state import StateStore
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

PROBE = "vtsec-probe0"  # a veth pair the test owns in the host's namespace: the target of attacks on host devices


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

    def status_as(self, user: str, lab: str) -> str:
        """`vtopo status LAB` as `user`: what the agent's record says, without probing."""
        shown = subprocess.run(["runuser", "-u", self.users[user].pw_name, "--", sys.executable, "-m", "vtopo",
                                "status", lab], env=self.agent.env, capture_output=True, text=True, timeout=60,
                               cwd="/")
        assert shown.returncode == 0, shown.stderr
        return shown.stdout

    @staticmethod
    def netns(lab: str, node: str) -> str:
        prefix = next(record.prefix for record in StateStore().labs() if record.name == lab)
        return f"/run/netns/{prefix}-{node}"


def _lab_file(directory: Path, name: str) -> Path:
    topology = io.load(TOPOLOGIES / "bridge-veth.vtopo")
    topology.name, topology.prefix = name, ""  # a prefix of its own, from its name
    path = directory / f"{name}.vtopo"
    io.save(topology, path)
    path.chmod(0o644)
    return path


@pytest.fixture(scope="module")
def labs() -> Iterator[Labs]:
    directory = Path(tempfile.mkdtemp(prefix="vtopo-security-labs-"))  # members read the lab files
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
        shutil.rmtree(directory)
    assert snapshot() - before == {}


def _links(*netns: str) -> set[str]:
    """The interfaces of a namespace (the host's by default), by name and MAC."""
    listing = subprocess.run(["ip", *(("-n", *netns) if netns else ()), "-br", "link"], capture_output=True, text=True,
                             check=True).stdout
    return {" ".join(line.split()[::2]) for line in listing.splitlines()}  # not the state, which may be settling


def _host_links() -> set[str]:
    return _links()


def _b_links(labs: Labs) -> set[str]:
    return _links(Path(labs.netns("sec-b", "c1")).name)


# ------------------------------------------------------------ the member is root of their own nodes, and only there

def test_the_netns_belongs_to_the_labs_own_user_namespace(labs: Labs) -> None:
    """The owner of the node's network namespace is the lab's user namespace (whose map the next test reads)."""
    prefix = Path(labs.netns("sec-a", "c1")).name.split("-")[0]
    kept = os.stat(f"/run/vtopo/ns/{prefix}/user")
    assert owning_userns(labs.netns("sec-a", "c1")) == (kept.st_dev, kept.st_ino) != \
        (os.stat("/proc/self/ns/user").st_dev, os.stat("/proc/self/ns/user").st_ino)


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
    with open(labs.netns("sec-b", "c1"), "rb") as theirs:
        entered = labs.in_a("nsenter", "--net=/proc/self/fd/0", "ip", "link", "del", "eth0", stdin=theirs.fileno())
    assert moved.returncode != 0 and "Operation not permitted" in moved.stderr, moved.stderr
    assert entered.returncode != 0 and "Operation not permitted" in entered.stderr, entered.stderr
    assert _b_links(labs) == before


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
    assert outcome["dellink"] in REFUSED and outcome["macvlan"] in REFUSED, outcome
    assert _host_links() == host


def test_target_netnsid_on_another_members_node_is_refused(labs: Labs) -> None:
    before = _b_links(labs)
    index = int(subprocess.run(["ip", "-n", Path(labs.netns("sec-b", "c1")).name, "-j", "link", "show", "eth0"],
                               capture_output=True, text=True, check=True).stdout.split('"ifindex":')[1].split(",")[0])
    outcome = _raw_netlink_from_a(labs, labs.netns("sec-b", "c1"), index)
    assert outcome["dellink"] in REFUSED and outcome["macvlan"] in REFUSED, outcome
    assert _b_links(labs) == before


SOCKET_IOCTLS = r"""
import fcntl, json, socket, struct, sys
probe = sys.argv[1].encode()
host = socket.socket(fileno=0)
outcome = {}
for name, request, payload in (
        ("SIOCSIFFLAGS", 0x8914, struct.pack("16sH14x", probe, 0)),
        ("SIOCSIFADDR", 0x8916, struct.pack("16sH2s4s8x", probe, socket.AF_INET, b"\0\0",
                                            socket.inet_aton("198.51.100.77"))),
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
    module = labs.in_a(sys.executable, "-c", INIT_MODULE)
    refusal = module.stdout.split()
    assert refusal[0] == "-1" and int(refusal[1]) in (errno.EPERM, errno.ENOSYS), module.stdout + module.stderr
    raw = labs.in_a(sys.executable, "-c", "import socket; s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); "
                    f"s.bind(({PROBE!r}, 0))")
    assert raw.returncode != 0 and "No such device" in raw.stderr, raw.stderr  # the host's devices are not there


OPENING_NAMESPACE_FILES = """
import errno, os, sys
for path in sys.argv[1:]:
    try:
        os.close(os.open(path, os.O_RDONLY)) if os.path.basename(path) != "." else os.listdir(path)
        print(path, "opened")
    except OSError as error:
        print(path, errno.errorcode[error.errno])
"""


def test_a_member_on_the_host_reaches_no_labs_namespaces_directory(labs: Labs) -> None:
    """The files that keep a lab's user, mount and UTS namespaces lie in a directory of the lab's own that only root
    enters: b, logged in on the host, can list or open none of a's, nor of their own (vtopo enters them for b)."""
    prefixes = {record.name: record.prefix for record in StateStore().labs()}
    paths = [f"/run/vtopo/ns/{prefixes[lab]}/{name}" for lab in ("sec-a", "sec-b") for name in (".", "user", "c1.mnt")]
    assert all(os.path.exists(path) for path in paths)
    tried = subprocess.run(["runuser", "-u", labs.users["b"].pw_name, "--", sys.executable, "-c",
                            OPENING_NAMESPACE_FILES, *paths], capture_output=True, text=True, timeout=60, cwd="/")
    assert tried.stdout.splitlines() == [f"{path} EACCES" for path in paths], tried.stdout + tried.stderr


def test_b_cannot_run_anything_in_as_lab(labs: Labs) -> None:
    refused = labs.exec_as("b", "sec-a", "c1", "true")
    assert refused.returncode != 0 and "belongs to" in refused.stderr, refused.stderr
    outsider = subprocess.run(["runuser", "-u", labs.users["c"].pw_name, "--", sys.executable, "-m", "vtopo", "exec",
                               "sec-a", "c1", "--", "true"], env=labs.agent.env, capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL, cwd="/")
    assert outsider.returncode != 0, outsider.stderr


# ------------------------------------------------------------ the agent's record of other labs

NAMESPACES_MADE_AND_GONE = 40
"""More than the namespaces the host numbered for both labs: each id a's node gives a namespace of its own is also the
id the host gives one of the labs' namespaces."""

MAKING_NAMESPACES_THAT_GO = f"""
numbered=$(ip netns list-id | wc -l)
for i in $(seq {NAMESPACES_MADE_AND_GONE}); do
    unshare -n sleep 30 & pid=$!
    until [ "$(readlink /proc/$pid/ns/net)" != "$(readlink /proc/self/ns/net)" ]; do sleep 0.01; done
    ip link add vtx$i type veth peer name vty netns /proc/$pid/ns/net  # c1's namespace numbers the new one
    kill $pid; wait $pid
done
until [ "$(ip netns list-id | wc -l)" = "$numbered" ]; do sleep 0.05; done  # the kernel has told of every end
echo made and gone
"""


def test_namespaces_a_member_makes_and_ends_in_their_node_leave_every_labs_record_running(labs: Labs) -> None:
    """a, root of their node, makes namespaces there and ends them. The kernel tells a's node of each end by the id a's
    node gave it (RTM_DELNSID, in the node's numbering), and the agent hears it: it must not take a namespace the host
    knows by that number (b's node, or a's other nodes) for gone."""
    made = labs.in_a("sh", "-c", MAKING_NAMESPACES_THAT_GO)
    assert made.stdout.strip() == "made and gone", made.stdout + made.stderr
    time.sleep(1)  # the agent hears the ends in milliseconds
    for user, lab in (("b", labs.b_lab), ("a", labs.a_lab)):
        status = labs.status_as(user, lab)
        assert "degraded" not in status and "running" in status, status
