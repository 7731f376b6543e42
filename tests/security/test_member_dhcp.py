"""A member's DHCP server, relay and clients live in the member's own nodes: they run as the member, in the network
namespaces of the member's lab, none in the host's; another member's client on the same machine gets no offer from
them; what root reads of them (the lease file status shows) is read without following a symlink or waiting on a FIFO
and shown only as addresses and MACs; and no text of a member's reaches dnsmasq's configuration unchecked.

Member a deploys the dhcp-relay teaching lab, member b a lab whose one container asks for an address by DHCP, through
a real agent, shared by the module's tests."""
from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dhcp_labs import dhcp_relay
from residue import snapshot
from security.members import MembersLabs, deployed_by_each, prefix_of, saved
from vtopo.model.topology import Endpoint, Interface, Link, Node, Topology

pytestmark = pytest.mark.privileged

A_LAB, B_LAB = "dhcp-a", "dhcp-b"
SHADOW_LINE = "root:"  # how /etc/shadow's first line starts: seen in an answer, the file was read
NO_OFFER_WITHIN_S = 10  # two of the client's rounds of three DISCOVERs


def _lone_client(name: str) -> Topology:
    """A container asking for an address by DHCP on a bridge where nothing serves it."""
    topology = Topology(name=name)
    topology.add_node(Node(id="br", name="br", kind="bridge", settings={"forward_delay": 0.0}))
    topology.add_node(Node(id="c1", name="c1", kind="container"))
    topology.add_link(Link(id="l1", a=Endpoint("c1", "eth0", Interface(dhcp=True)), b=Endpoint("br", "p1")))
    return topology


class Labs(MembersLabs):
    def vtopo(self, user: str | None, *args: str) -> subprocess.CompletedProcess[str]:
        return self.agent.vtopo(self.users[user].pw_name if user else None, *args)

    def leased(self, user: str, lab: str, node: str, within_s: float) -> list[str]:
        """The addresses `node`'s DHCP client holds once it holds one, or after `within_s` ([] then)."""
        deadline = time.monotonic() + within_s
        while True:
            shown = self.vtopo(user, "exec", lab, node, "--", "ip", "-j", "-4", "address", "show", "dev", "eth0")
            held = [a["local"] for link in json.loads(shown.stdout or "[]") for a in link["addr_info"]
                    if a.get("dynamic")]
            if held or time.monotonic() > deadline:
                return held
            time.sleep(0.5)

    @staticmethod
    def dhcp_pids(lab: str) -> dict[str, int]:
        return {f"{path.parent.name}/{path.name}": int(path.read_text())
                for path in Path(f"/run/vtopo/{prefix_of(lab)}").glob("*.dhcp/*.pid")}


@pytest.fixture(scope="module")
def labs() -> Iterator[Labs]:
    a_lab = dhcp_relay()
    a_lab.update_lab(name=A_LAB)
    with deployed_by_each(lambda directory: [("a", saved(a_lab, directory)),
                                             ("b", saved(_lone_client(B_LAB), directory))]) as deployed:
        yield Labs(deployed.agent, deployed.users, deployed.directory)


def test_a_members_dhcp_server_relay_and_clients_run_as_the_member_in_the_labs_nodes_and_none_in_the_hosts(
        labs: Labs) -> None:
    """Each of dnsmasq (srv's server, r1's relay) and udhcpc (c1's, c2's) runs as member a, in the network namespace
    of its node; none is in the host's, whose UDP sockets hold none of theirs (no port 67 or 68 of a member's)."""
    a = labs.users["a"]
    pids = labs.dhcp_pids(A_LAB)
    assert sorted(pids) == ["c1.dhcp/udhcpc-eth0.pid", "c2.dhcp/udhcpc-eth0.pid", "r1.dhcp/dnsmasq.pid",
                            "srv.dhcp/dnsmasq.pid"]
    hosts = os.stat("/proc/self/ns/net")
    prefix = prefix_of(A_LAB)
    for name, pid in pids.items():
        status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        assert status["Uid"].split() == [str(a.pw_uid)] * 4, name
        theirs, node = os.stat(f"/proc/{pid}/ns/net"), os.stat(f"/run/netns/{prefix}-{name.split('.')[0]}")
        assert (theirs.st_ino, theirs.st_dev) == (node.st_ino, node.st_dev) != (hosts.st_ino, hosts.st_dev), name
    sockets = subprocess.run(["ss", "-H", "-uanp"], capture_output=True, text=True, check=True).stdout
    assert not [line for line in sockets.splitlines() if any(f"pid={pid}," in line for pid in pids.values())]


def test_another_members_client_gets_no_offer_from_the_first_members_server(labs: Labs) -> None:
    """a's clients hold leases; b's client, on the same machine, asks for NO_OFFER_WITHIN_S and is offered nothing,
    and a's server has handed nothing to b's MAC."""
    assert labs.leased("a", A_LAB, "c1", NO_OFFER_WITHIN_S) and labs.leased("a", A_LAB, "c2", NO_OFFER_WITHIN_S)
    assert labs.leased("b", B_LAB, "c1", NO_OFFER_WITHIN_S) == []
    b_mac = labs.vtopo("b", "exec", B_LAB, "c1", "--", "cat", "/sys/class/net/eth0/address").stdout.strip()
    leases = Path(f"/run/vtopo/{prefix_of(A_LAB)}/srv.dhcp/leases").read_text()
    assert b_mac and b_mac not in leases and len(leases.splitlines()) == 2


def test_root_reads_a_members_lease_file_without_following_a_symlink_or_waiting_on_a_fifo(labs: Labs) -> None:
    """The lease file lies in a's own directory: a replaces it with a symlink to /etc/shadow, then with a FIFO.
    Root's `vtopo status` neither shows the shadow file nor waits: srv has no lease it can show."""
    leases = Path(f"/run/vtopo/{prefix_of(A_LAB)}/srv.dhcp/leases")
    a = labs.users["a"].pw_name
    for plant in (f"ln -sfn /etc/shadow {leases}", f"rm -f {leases} && mkfifo {leases}"):
        planted = labs.agent.run_as(a, "sh", "-c", plant)
        assert planted.returncode == 0, planted.stderr
        started = time.monotonic()
        status = labs.vtopo(None, "status", A_LAB)
        assert status.returncode == 0 and time.monotonic() - started < 30, status.stderr
        [server] = [line for line in status.stdout.splitlines() if line.split()[:2] == ["node", "srv"]]
        assert server.endswith("; leases: none yet") and SHADOW_LINE not in status.stdout, status.stdout


def _watched_inodes(pid: int) -> set[tuple[int, int]]:
    """(device, inode) of each object `pid`'s inotify descriptors watch, as the kernel lists them in fdinfo."""
    watched = set()
    for info in Path(f"/proc/{pid}/fdinfo").iterdir():
        for line in info.read_text().splitlines():
            if line.startswith("inotify wd:"):
                fields = dict(field.split(":", 1) for field in line.split()[1:])
                major, minor = int(fields["sdev"], 16) >> 20, int(fields["sdev"], 16) & 0xFFFFF
                watched.add((os.makedev(major, minor), int(fields["ino"], 16)))
    return watched


def test_the_agents_watch_of_a_members_lease_directory_stays_on_it_through_a_swap_and_a_flood(labs: Labs) -> None:
    """The agent watches srv's lease directory (a's own) with inotify. a may not swap that directory for a symlink
    (its parent is root's); a points the lease file at /etc and restarts srv (the agent then watches the lab anew),
    then restarts it whole and rewrites the lease file 2,000 times: the agent's watches, as the kernel lists them, stay on directories of
    a's lab and never on /etc, and root's status answers at once after the flood."""
    prefix, a = prefix_of(A_LAB), labs.users["a"].pw_name
    lab_run, etc = Path(f"/run/vtopo/{prefix}"), os.stat("/etc")

    def watches_stay_in_the_lab() -> None:
        watched = _watched_inodes(labs.agent.process.pid)
        lab_directories = {(found.st_dev, found.st_ino) for path in [lab_run, *lab_run.rglob("*")]
                           if not path.is_symlink() and path.is_dir() and (found := path.stat())}
        assert watched and (etc.st_dev, etc.st_ino) not in watched and watched <= lab_directories

    swapped = labs.agent.run_as(a, "sh", "-c", f"mv {lab_run}/srv.dhcp {lab_run}/srv.away")
    assert swapped.returncode != 0 and "Permission denied" in swapped.stderr
    pointed = labs.agent.run_as(a, "sh", "-c", f"ln -sfn /etc {lab_run}/srv.dhcp/leases")
    assert pointed.returncode == 0, pointed.stderr
    labs.vtopo("a", "node", A_LAB, "srv", "restart")  # a's dnsmasq may not write /etc: a's own node fails to start
    watches_stay_in_the_lab()
    labs.agent.run_as(a, "rm", f"{lab_run}/srv.dhcp/leases")
    assert labs.vtopo("a", "node", A_LAB, "srv", "restart").returncode == 0
    flood = labs.agent.run_as(a, "sh", "-c", f"cd {lab_run}/srv.dhcp && for i in $(seq 2000); do echo x > leases.new "
                                             "&& mv -f leases.new leases; done")
    assert flood.returncode == 0, flood.stderr
    started = time.monotonic()
    status = labs.vtopo(None, "status", A_LAB)
    assert status.returncode == 0 and time.monotonic() - started < 5, status.stderr
    watches_stay_in_the_lab()

def _smuggling(name: str, pool: str, server: str) -> Topology:
    """The dhcp-relay lab with `pool` as srv's one pool and `server` as the server r1 relays lan1 to."""
    topology = dhcp_relay()
    topology.update_lab(name=name)
    srv, r1 = topology.node_named("srv"), topology.node_named("r1")
    assert srv is not None and r1 is not None
    topology.update_node(srv.id, settings={**srv.settings, "dhcp_pools": [pool]})
    topology.update_node(r1.id, settings={**r1.settings, "dhcp_relay": {"eth1": server}})
    return topology


@pytest.mark.parametrize(("pool", "server", "refused"), [
    ("10.0.1.100-10.0.1.199/24 gateway 10.0.1.1\ndhcp-script=/tmp/run-me", "10.0.0.10\ndhcp-script=/tmp/run-me",
     ["at $.nodes[0].settings.dhcp_pools[0]", "at $.nodes[1].settings.dhcp_relay.eth1"]),
    ("10.0.1.100-10.0.1.199/24 gateway 10.0.1.1,6,192.0.2.66", "10.0.0.10,192.0.2.66", ["node srv", "node r1"]),
], ids=["a-line-more", "a-value-more"])
def test_a_pool_or_a_relay_that_smuggles_a_dnsmasq_option_is_refused_before_anything_is_built(
        labs: Labs, pool: str, server: str, refused: list[str]) -> None:
    """dnsmasq reads an option a line, its values split at commas: a newline and `dhcp-script=` would have it run a
    program at each lease, a comma hand out another DNS server or relay elsewhere. The loader refuses any newline,
    and a pool's and a relay's addresses are parsed as addresses: one line each, naming where."""
    before = snapshot()
    done = labs.vtopo("b", "deploy", str(saved(_smuggling(f"dhcp-smuggled-{len(refused[0])}", pool, server),
                                               labs.directory)))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert [line.split(":")[1].strip() for line in errors] == refused, done.stderr
    assert snapshot() - before == {}
