"""Captures on deployed labs: ARP and ICMP on a bridge, OSPF hellos, a ping followed router by router, pcapng.

The tests of one shipped lab follow each other, so that the lab is deployed once for them (`shared`)."""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from scapy.layers.inet import ICMP
from scapy.utils import rdpcap

from vtopo.capture import Capture, CaptureTarget, PacketSummary, path_targets, resolve, summarize
from netns_pairs import netns_pair

pytestmark = pytest.mark.privileged


def leftover_files() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("vtopo-capture-*"))


def collect(capture: Capture, enough, timeout: float = 15) -> list[PacketSummary]:  # type: ignore[no-untyped-def]
    """Summaries of what the capture sees until `enough(summaries)` holds or time runs out."""
    seen: list[PacketSummary] = []
    deadline = time.monotonic() + timeout
    while not enough(seen) and time.monotonic() < deadline:
        seen += [summarize(p) for p in capture.take()]
        time.sleep(0.1)
    return seen


def mac_of(lab, node: str, device: str = "eth0") -> str:  # type: ignore[no-untyped-def]
    return json.loads(lab.run(node, "ip", "-j", "link", "show", device, check=True).stdout)[0]["address"]


def seen_along(targets: list[CaptureTarget], bpf: str, send) -> list[list[PacketSummary]]:  # type: ignore[no-untyped-def]
    """What each target sees of one packet: captures start on all of them, then `send()` (true when it went)."""
    captures = [Capture(target, bpf=bpf) for target in targets]
    try:
        for capture in captures:
            capture.start()
        assert send()
        return [collect(capture, lambda s: len(s) >= 1, timeout=5) for capture in captures]
    finally:
        for capture in captures:
            capture.close()


def wait_for_routes(lab, source: str, destination: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 30
    while not lab.pings(source, destination, count=1):
        assert time.monotonic() < deadline, f"{source} never reached {destination}"
        time.sleep(0.5)


def test_arp_and_icmp_on_a_bridge_port_with_the_right_addresses_then_saved_and_read_back(shared, tmp_path):
    lab = shared("bridge-veth")
    before = leftover_files()
    capture = Capture(resolve(lab.lab.context, "c1:eth0"))
    capture.start()
    try:
        assert lab.run("c1", "ping", "-c", "2", "-i", "0.3", "10.0.0.2").returncode == 0
        seen = collect(capture, lambda s: sum(p.protocol == "ICMP" for p in s) >= 4 and
                       sum(p.protocol == "ARP" for p in s) >= 2)
        capture.save(tmp_path / "c1.pcapng")
    finally:
        capture.close()
    c1, c2 = mac_of(lab, "c1"), mac_of(lab, "c2")
    infos = {(p.protocol, p.src_mac, p.dst_mac, p.info) for p in seen}
    assert ("ARP", c1, "ff:ff:ff:ff:ff:ff", "who-has 10.0.0.2 tell 10.0.0.1") in infos
    assert ("ARP", c2, c1, f"10.0.0.2 is-at {c2}") in infos
    requests = [p for p in seen if p.info.startswith("echo request")]
    replies = [p for p in seen if p.info.startswith("echo reply")]
    assert [(p.src_mac, p.dst_mac, p.src_ip, p.dst_ip, p.ttl) for p in requests] == [(c1, c2, "10.0.0.1", "10.0.0.2", 64)] * 2
    assert [(p.src_mac, p.dst_mac, p.src_ip, p.dst_ip) for p in replies] == [(c2, c1, "10.0.0.2", "10.0.0.1")] * 2
    assert [p.echo for p in requests] == [p.echo for p in replies] and requests[0].echo[1] == 1  # type: ignore[index]
    saved = rdpcap(str(tmp_path / "c1.pcapng"))
    assert len(saved) == capture.captured >= 6
    assert sum(1 for packet in saved if ICMP in packet) == 4
    assert leftover_files() == before


def test_the_cli_prints_a_line_per_packet_and_writes_pcapng(shared, tmp_path):
    lab = shared("bridge-veth")
    out = tmp_path / "cli.pcapng"
    cli = subprocess.Popen([sys.executable, "-m", "vtopo", "capture", "bridge-veth", "br0", "-f", "icmp", "-c", "4",
                            "-w", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert cli.stderr is not None
    assert cli.stderr.readline().endswith("-br0 in the host), filter 'icmp'\n")
    time.sleep(0.5)  # tcpdump listens before the line above; the margin covers the CLI's own start
    lab.run("c2", "ping", "-c", "2", "-i", "0.3", "10.0.0.3")
    stdout, stderr = cli.communicate(timeout=20)
    assert cli.returncode == 0, stderr
    lines = stdout.splitlines()
    assert len(lines) == 4 and "10.0.0.2 → 10.0.0.3" in lines[0] and "echo request id" in lines[0]
    assert "4 packets captured, 0 dropped by the kernel; saved in" in stderr
    assert len(rdpcap(str(out))) == 4


def test_a_bad_target_or_filter_is_named_and_leaves_no_file(shared):
    lab = shared("bridge-veth")
    before = leftover_files()
    wrong = subprocess.run([sys.executable, "-m", "vtopo", "capture", "bridge-veth", "c1:eth7"], capture_output=True,
                           text=True, timeout=30)
    assert wrong.returncode == 1 and "c1 has no port 'eth7' (it has: eth0)" in wrong.stderr
    bad = subprocess.run([sys.executable, "-m", "vtopo", "capture", "bridge-veth", "c1", "-f", "port nonsense"],
                         capture_output=True, text=True, timeout=30)
    assert bad.returncode == 1 and "capture on c1:eth0 (eth0) failed" in bad.stderr and "Traceback" not in bad.stderr
    assert lab.lab.context.topology.name == "bridge-veth"
    assert leftover_files() == before  # the capture's temporary file goes with the capture that failed to start


def test_ospf_hellos_come_from_both_routers_ids(shared):
    lab = shared("l2-vs-l3")
    context = lab.lab.context
    ids = {node.kind.router_id(node) for node in context.nodes.values() if node.kind.name == "router"}
    capture = Capture(resolve(context, "r1:eth1"), bpf="proto ospf")
    capture.start()
    try:
        seen = collect(capture, lambda s: {p.info.split(" from router ")[1].split()[0] for p in s
                                           if p.info.startswith("Hello")} >= ids)
    finally:
        capture.close()
    hellos = [p for p in seen if p.info.startswith("Hello from router ")]
    assert {p.info.split()[3] for p in hellos} == ids
    assert all(p.protocol == "OSPF" and p.dst_ip == "224.0.0.5" and p.ttl == 1 for p in hellos)


def test_follow_a_ping_across_two_routers_ttl_drops_at_each(shared):
    lab = shared("l2-vs-l3")
    wait_for_routes(lab, "h1", "h3")
    targets = path_targets(lab.lab.context, "h1", "h3")
    assert [t.label for t in targets] == ["h1:eth0", "lan1:p3", "r1:eth1", "r2:eth0", "lan2:p2"]
    hops = seen_along(targets, "icmp[icmptype] == icmp-echo",
                      lambda: lab.run("h1", "ping", "-c", "1", "-W", "2", "10.2.0.10").returncode == 0)
    assert all(len(hop) == 1 for hop in hops), hops
    requests = [hop[0] for hop in hops]
    assert [p.ttl for p in requests] == [64, 64, 63, 62, 62]
    assert len({p.echo for p in requests}) == 1
    assert requests[0].src_mac == requests[1].src_mac != requests[2].src_mac != requests[3].src_mac
    assert {(p.src_ip, p.dst_ip) for p in requests} == {("10.1.0.10", "10.2.0.10")}


def test_vxlan_and_tcp_seen_on_the_underlay():
    """The kernel's own VXLAN between two namespaces, and a TCP connection refused: the capture on the underlay veth
    names the VNI and the inner ping, and the TCP flags, seq and ack."""
    with netns_pair("X", "10.250") as pair:
        for netns, local, remote, inner in ((pair.netns_a, pair.address_a, pair.address_b, "10.9.0.1"),
                                            (pair.netns_b, pair.address_b, pair.address_a, "10.9.0.2")):
            subprocess.run(["ip", "-n", netns, "link", "add", "vx42", "type", "vxlan", "id", "42", "local", local,
                            "remote", remote, "dstport", "4789"], check=True)
            subprocess.run(["ip", "-n", netns, "addr", "add", f"{inner}/24", "dev", "vx42"], check=True)
            subprocess.run(["ip", "-n", netns, "link", "set", "vx42", "up"], check=True)
        capture = Capture(CaptureTarget("a", pair.netns_a[:15], pair.netns_a), bpf="udp port 4789 or tcp")
        capture.start()
        try:
            in_a = ["ip", "netns", "exec", pair.netns_a]
            assert subprocess.run([*in_a, "ping", "-c", "2", "-i", "0.3", "-W", "2", "10.9.0.2"]).returncode == 0
            subprocess.run([*in_a, "bash", "-c", f"echo > /dev/tcp/{pair.address_b}/9"], capture_output=True)
            seen = collect(capture, lambda s: sum(p.protocol == "TCP" for p in s) >= 2 and
                           sum("echo reply" in p.info for p in s) >= 2)
        finally:
            capture.close()
    tunnelled = [p.info for p in seen if p.protocol == "VXLAN"]
    assert "vni 42: 10.9.0.1 → 10.9.0.2 ICMP echo request id" in " ".join(tunnelled), tunnelled
    assert any(info.startswith("vni 42: ARP who-has 10.9.0.2 tell 10.9.0.1") for info in tunnelled), tunnelled
    syn, refused = [p for p in seen if p.protocol == "TCP"][:2]
    port, arrow, to, flags, _, seq, *_ = syn.info.split()
    assert (arrow, to, flags, syn.src_ip, syn.dst_ip) == ("→", "9", "[S]", pair.address_a, pair.address_b)
    assert refused.info == f"9 → {port} [RA] seq 0 ack {int(seq) + 1} len 0"


def test_captures_on_a_vms_tap_and_its_macvtap_see_its_echoes(deployed):
    """The host-side devices of VMs: the tap on a bridge and the macvtap on a segment, each seen from the host."""
    lab = deployed("vm-tap-vs-macvtap")
    for vm, address in (("vm1", "10.0.10.2"), ("vm2", "10.0.11.2")):
        target = resolve(lab.lab.context, f"{vm}:nic0")
        assert target.netns is None, "a VM's NIC lives in the host"
        capture = Capture(target, bpf="icmp")
        capture.start()
        try:
            wait_for_routes(lab, "host", vm)
            seen = collect(capture, lambda s: any(p.info.startswith("echo reply") for p in s))
        finally:
            capture.close()
        guest_mac = lab.run(vm, "cat", "/sys/class/net/eth0/address", check=True, timeout=60).stdout.strip()
        replies = [p for p in seen if p.info.startswith("echo reply")]
        assert replies and all((p.src_ip, p.src_mac) == (address, guest_mac) for p in replies), (target, seen)
