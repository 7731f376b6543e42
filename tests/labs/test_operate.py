"""Operating a running lab: nodes stopped and started, links taken down and up, impairments changed live.

The `deployed` fixture destroys each lab afterwards and checks that nothing is left, so every test here also shows
that destroy stays exact with a node stopped or a link down.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from vtopo.cli.main import main
from vtopo.compile.resolving import Resolving
from vtopo.model import io
from vtopo.model.impairment_change import ImpairmentChange
from vtopo.model.topology import Topology
from vtopo.lab_operations import set_link_impairment
from waiting import wait_for

pytestmark = pytest.mark.privileged


def vtopo(capsys: Any, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def ip_link(netns: str | None, device: str) -> str:
    return subprocess.run(["ip", *(["-n", netns] if netns else []), "-o", "link", "show", device],
                          capture_output=True, text=True, check=True).stdout


def is_up(netns: str | None, device: str) -> bool:
    return "UP" in ip_link(netns, device).split("<", 1)[1].split(">", 1)[0].split(",")


def process_state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def netns_of(lab, node: str) -> str:  # type: ignore[no-untyped-def]
    context = lab.lab.node(node)
    return str(context.kind.netns(context))


def test_a_stopped_container_keeps_its_namespace_with_interfaces_down_and_processes_frozen(deployed, capsys):
    lab = deployed("bridge-veth")
    netns = netns_of(lab, "c1")
    sleeper = subprocess.Popen(lab.lab.command_in("c1", ["sleep", "300"]))
    assert lab.pings("c2", "c1")

    code, out, _ = vtopo(capsys, "node", "bridge-veth", "c1", "stop")
    assert (code, out) == (0, "stopped c1 in lab bridge-veth\n")
    assert Path(f"/run/netns/{netns}").exists()
    assert not is_up(netns, "eth0")
    assert "NO-CARRIER" in ip_link(None, lab.lab.context.node_named("c1").ends[0].other.device)  # the bridge's end
    assert wait_for(lambda: process_state(sleeper.pid) == "T", 2)
    assert not lab.pings("c2", "c1", count=1)
    code, out, _ = vtopo(capsys, "status", "bridge-veth")
    assert code == 0 and "lab bridge-veth" in out and ": running" in out
    assert any(line.split()[:3] == ["node", "c1", "stopped"] for line in out.splitlines()), out
    code, _, err = vtopo(capsys, "node", "bridge-veth", "c1", "stop")
    assert (code, err) == (1, "error: c1 in lab bridge-veth is already stopped\n")

    code, out, _ = vtopo(capsys, "node", "bridge-veth", "c1", "start")
    assert (code, out) == (0, "started c1 in lab bridge-veth\n")
    assert is_up(netns, "eth0")
    assert process_state(sleeper.pid) in "SR"
    assert wait_for(lambda: lab.pings("c2", "c1", count=1), 10)

    assert vtopo(capsys, "node", "bridge-veth", "c1", "stop")[0] == 0  # destroy of a stopped node leaves nothing
    lab.deployer.destroy("bridge-veth")
    assert sleeper.wait(5) == -9  # what ran inside died with the namespace
    lab.deployer.deploy(lab.topology)  # the fixture destroys it again and checks the residue


def has_carrier(netns: str | None, device: str) -> bool:
    details = subprocess.run(["ip", *(["-n", netns] if netns else []), "-d", "link", "show", device],
                             capture_output=True, text=True, check=True).stdout
    return "NO-CARRIER" not in details and "LOWER_UP" in details


def test_a_link_taken_down_is_a_cable_pull_and_stays_down_through_a_node_restart(deployed, capsys):
    lab = deployed("bridge-veth")
    netns = netns_of(lab, "c1")
    bridge_end = lab.lab.context.node_named("c1").ends[0].other.device
    code, out, _ = vtopo(capsys, "link", "bridge-veth", "c1", "br0:p1", "down")
    assert (code, out) == (0, "link c1:eth0-br0:p1 in lab bridge-veth is down: c1:eth0 stays up without carrier, "
                              "its cable pulled at br0\n")
    assert is_up(netns, "eth0") and not has_carrier(netns, "eth0") and not is_up(None, bridge_end)
    routes = lab.run("c1", "ip", "route", "show", "10.0.0.0/24").stdout
    assert "src 10.0.0.1 linkdown" in routes, "the address and its route stay, as after a pulled cable"
    assert not lab.pings("c2", "c1", count=1)
    code, out, _ = vtopo(capsys, "status", "bridge-veth")
    assert any(line.split()[:3] == ["link", "c1:eth0-br0:p1", "down"] for line in out.splitlines()), out

    assert vtopo(capsys, "node", "bridge-veth", "c1", "restart")[0] == 0
    assert is_up(netns, "eth0") and not has_carrier(netns, "eth0"), "a down link stays down when its node starts"
    assert vtopo(capsys, "node", "bridge-veth", "c1", "stop")[0] == 0
    code, out, _ = vtopo(capsys, "link", "bridge-veth", "br0", "c1", "up")
    assert (code, out) == (0, "link c1:eth0-br0:p1 in lab bridge-veth is up (c1 stopped: its end stays down)\n")
    assert is_up(None, bridge_end) and not is_up(netns, "eth0")
    assert vtopo(capsys, "node", "bridge-veth", "c1", "start")[0] == 0
    assert has_carrier(netns, "eth0")
    assert wait_for(lambda: lab.pings("c2", "c1", count=1), 10)
    assert vtopo(capsys, "link", "bridge-veth", "c2", "br0", "down")[0] == 0  # destroyed down: nothing left


def test_operating_errors_are_one_line_naming_the_node_or_link(deployed, capsys):
    deployed("bridge-veth")
    code, _, err = vtopo(capsys, "node", "bridge-veth", "nosuch", "stop")
    assert code == 1 and err.startswith("error: lab bridge-veth has no node 'nosuch' (it has: br0, c1, c2, c3)")
    code, _, err = vtopo(capsys, "node", "bridge-veth", "br0", "stop")
    assert code == 1 and err.startswith("error: br0 in lab bridge-veth is a Linux bridge: it cannot be stopped")
    code, _, err = vtopo(capsys, "link", "bridge-veth", "c1", "c2", "down")
    assert (code, err) == (1, "error: lab bridge-veth has no link between c1 and c2\n")
    code, _, err = vtopo(capsys, "link", "bridge-veth", "c1:eth1", "br0", "down")
    assert (code, err) == (1, "error: lab bridge-veth has no link between c1:eth1 and br0\n")
    code, _, err = vtopo(capsys, "link", "bridge-veth", "c1", "br0", "up")
    assert (code, err) == (1, "error: link c1:eth0-br0:p1 in lab bridge-veth is up already\n")
    code, _, err = vtopo(capsys, "node", "no-such-lab", "c1", "stop")
    assert code == 1 and "no deployed lab is named 'no-such-lab'" in err


def iperf_mbit(lab, client: str, server: str, rate_mbit: float) -> float:  # type: ignore[no-untyped-def]
    """What `server` receives of a UDP stream offered at twice the link's rate, in Mbit/s of payload.

    UDP, because a TCP figure over 2 s depends on the host's congestion control: under BBR (these hosts' default,
    which new namespaces inherit) slow start overshoots the 50 ms queue and one retransmission timeout cost a
    quarter of the run (7.5 of 10 Mbit/s in one CI run). A sender blocked by the full queue loses nothing."""
    address = lab.address(client, server)
    daemon = subprocess.Popen(lab.lab.command_in(server, ["iperf3", "-s", "-1", "-p", "5299"]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):
            result = lab.run(client, "iperf3", "-c", address, "-p", "5299", "-t", "2", "-u", "-b",
                             f"{2 * rate_mbit:g}M", "-J")
            report = json.loads(result.stdout or "{}")
            if result.returncode == 0 and "error" not in report:
                return float(report["end"]["sum_received"]["bits_per_second"]) / 1e6
            time.sleep(0.1)  # the server is not listening yet
        raise AssertionError(result.stdout + result.stderr)
    finally:
        daemon.kill()
        daemon.wait()


def test_a_rate_changed_live_is_what_iperf_measures(deployed, capsys, monkeypatch):
    lab = deployed("bridge-veth")
    code, out, _ = vtopo(capsys, "link", "bridge-veth", "c1", "br0", "set", "--rate", "10mbit")
    assert (code, out) == (0, "link c1:eth0-br0:p1 in lab bridge-veth: rate 10 Mbit/s\n")
    slow = iperf_mbit(lab, "c1", "c2", 10)

    def resolved(*_: object) -> None:
        raise AssertionError("a link's rate set live resolved the lab anew")

    with monkeypatch.context() as broken:  # the link's devices come from the lab's record, as its deploy made them
        broken.setattr(Resolving, "__init__", resolved)
        # what the agent runs for the command
        said = set_link_impairment("bridge-veth", "c1", "br0", ImpairmentChange(rate_mbit=40))
    assert said == "link c1:eth0-br0:p1 in lab bridge-veth: rate 40 Mbit/s"
    fast = iperf_mbit(lab, "c1", "c2", 40)
    with capsys.disabled():
        print(f"iperf c1->c2 at rate 10 Mbit/s: {slow:.1f} Mbit/s; at 40 Mbit/s: {fast:.1f} Mbit/s")
    assert 9 <= slow <= 10 and 36 <= fast <= 40  # the rate counts Ethernet, IP and UDP headers too
    status = subprocess.run(["tc", "-n", netns_of(lab, "c1"), "qdisc", "show", "dev", "eth0"], capture_output=True,
                            text=True).stdout
    assert "tbf" in status and "rate 40Mbit" in status
    assert main(["status", "bridge-veth"]) == 0  # the journal and the recorded lab agree with the running one
    assert lab.deployer.status("bridge-veth")[0].document["links"][0]["impairment"]["rate_mbit"] == 40
    code, _, err = vtopo(capsys, "link", "bridge-veth", "c1", "br0", "set", "--delay", "20ms")
    assert code == 1 and "link c1:eth0-br0:p1" in err and "netem" in err


def ospf_ring() -> Topology:
    """Three OSPF routers in a ring, h1 behind r1 and h2 behind r2: h1 reaches h2 over r1-r2, or around over r3."""
    def end(node: str, port: str, address: str) -> dict[str, Any]:
        return {"node": node, "port": port, "interface": {"addresses": [address]}}

    nodes = [{"id": name, "name": name, "kind": kind, "position": {"x": 0, "y": 0}, "settings": settings}
             for name, kind, settings in (("r1", "router", {"passive": ["eth0"]}), ("r2", "router", {"passive": ["eth0"]}),
                                          ("r3", "router", {}), ("h1", "container", {"default_route": "10.1.0.1"}),
                                          ("h2", "container", {"default_route": "10.2.0.1"}))]
    links = [("h1", "eth0", "10.1.0.10/24", "r1", "eth0", "10.1.0.1/24"),
             ("h2", "eth0", "10.2.0.10/24", "r2", "eth0", "10.2.0.1/24"),
             ("r1", "eth1", "10.0.12.1/30", "r2", "eth1", "10.0.12.2/30"),
             ("r2", "eth2", "10.0.23.1/30", "r3", "eth1", "10.0.23.2/30"),
             ("r3", "eth2", "10.0.31.1/30", "r1", "eth2", "10.0.31.2/30")]
    return io.from_document({"format": "vtopo", "version": 3, "lab": {"id": "ospf-ring", "name": "ospf-ring"},
                             "nodes": nodes,
                             "links": [{"id": f"{a}-{b}", "a": end(a, pa, xa), "b": end(b, pb, xb)}
                                       for a, pa, xa, b, pb, xb in links]})


def ospf_gateway(lab, router: str, prefix: str) -> str:  # type: ignore[no-untyped-def]
    routes = json.loads(lab.run(router, "ip", "-j", "route", "show", prefix, "proto", "ospf").stdout or "[]")
    return str(routes[0].get("gateway", "")) if routes else ""


def test_ospf_reroutes_around_a_ring_link_taken_down(deployed, capsys):
    lab = deployed(ospf_ring())
    assert wait_for(lambda: ospf_gateway(lab, "r1", "10.2.0.0/24") == "10.0.12.2", 30)
    assert wait_for(lambda: lab.pings("h1", "h2", count=1), 10)

    started = time.monotonic()
    code, out, _ = vtopo(capsys, "link", "ospf-ring", "r1", "r2", "down")
    assert (code, out) == (0, "link r1:eth1-r2:eth1 in lab ospf-ring is down: r1:eth1 stays up without carrier and "
                              "r2:eth1 is set down (a veth between two nodes cannot lose carrier at both ends)\n")
    assert wait_for(lambda: ospf_gateway(lab, "r1", "10.2.0.0/24") == "10.0.31.1", 15, interval=0.01)
    rerouted = time.monotonic() - started
    assert wait_for(lambda: lab.pings("h1", "h2", count=1), 10)
    r1 = netns_of(lab, "r1")
    assert is_up(r1, "eth1") and not has_carrier(r1, "eth1") and not is_up(netns_of(lab, "r2"), "eth1")
    state = json.loads(lab.run("r1", "vtysh", "-c", "show interface eth1 json").stdout)["eth1"]
    assert (state["administrativeStatus"], state["operationalStatus"]) == ("up", "down"), "zebra: line protocol down"
    assert "10.0.12.1/30" in lab.run("r1", "ip", "-o", "addr", "show", "eth1").stdout, "the address stays"
    connected = json.loads(lab.run("r1", "vtysh", "-c", "show ip route 10.0.12.0/30 json").stdout or "{}")
    assert not any(route.get("selected") for route in connected.get("10.0.12.0/30", [])), "no connected route used"
    assert "10.0.12.2" not in lab.run("r1", "vtysh", "-c", "show ip ospf neighbor").stdout

    code, out, _ = vtopo(capsys, "link", "ospf-ring", "h1", "r1", "down")  # a router's LAN port keeps its interface
    assert out == "link h1:eth0-r1:eth0 in lab ospf-ring is down: r1:eth0 stays up without carrier and h1:eth0 is " \
                  "set down (a veth between two nodes cannot lose carrier at both ends)\n"
    assert wait_for(lambda: ospf_gateway(lab, "r3", "10.1.0.0/24") == "", 15), "r1 stops announcing lan1"
    assert vtopo(capsys, "link", "ospf-ring", "h1", "r1", "up")[0] == 0

    started = time.monotonic()
    assert vtopo(capsys, "link", "ospf-ring", "r1:eth1", "r2:eth1", "up")[0] == 0
    assert wait_for(lambda: ospf_gateway(lab, "r1", "10.2.0.0/24") == "10.0.12.2", 30, interval=0.01)
    restored = time.monotonic() - started
    with capsys.disabled():
        print(f"OSPF ring: r1 rerouted over r3 {rerouted:.2f} s after r1-r2 went down; back over r2 {restored:.2f} s "
              "after it came up")
    assert rerouted < 5  # carrier loss takes the interface down at once, no dead interval to wait for


def test_a_stopped_router_stops_its_daemons_and_starts_them_again(deployed, capsys):
    lab = deployed("l2-vs-l3")
    directory = Path(lab.lab.context.names.node_dir("r1"))

    def daemons() -> dict[str, bool]:
        found = {}
        for daemon in ("zebra", "ospfd"):
            try:
                pid = int((directory / f"{daemon}.pid").read_text())
                found[daemon] = Path(f"/proc/{pid}").exists() and process_state(pid) not in "ZX"
            except (OSError, ValueError):
                found[daemon] = False
        return found

    def r2_neighbours() -> str:
        return lab.run("r2", "vtysh", "-c", "show ip ospf neighbor").stdout

    assert wait_for(lambda: "Full" in r2_neighbours(), 20)
    assert daemons() == {"zebra": True, "ospfd": True}
    assert vtopo(capsys, "node", "l2-vs-l3", "r1", "stop")[0] == 0
    assert daemons() == {"zebra": False, "ospfd": False}
    assert not is_up(netns_of(lab, "r1"), "eth1")
    assert wait_for(lambda: "Full" not in r2_neighbours(), 6), "r2 sees r1 go (carrier lost on its eth1)"
    assert not lab.pings("h1", "h3", count=1)
    code, out, _ = vtopo(capsys, "status", "l2-vs-l3")
    assert code == 0 and any(line.split()[:3] == ["node", "r1", "stopped"] for line in out.splitlines()), out

    assert vtopo(capsys, "node", "l2-vs-l3", "r1", "start")[0] == 0
    assert daemons() == {"zebra": True, "ospfd": True}
    assert "Full" in lab.run("r1", "vtysh", "-c", "show ip ospf neighbor").stdout or \
        wait_for(lambda: "Full" in lab.run("r1", "vtysh", "-c", "show ip ospf neighbor").stdout, 20)
    assert wait_for(lambda: lab.pings("h1", "h3", count=1), 20)

    def default_route(node: str) -> str:
        return lab.run(node, "ip", "route", "show", "default").stdout

    assert "via 10.1.0.1" in default_route("h1") and "via 10.2.0.1" in default_route("h3")
    assert vtopo(capsys, "node", "l2-vs-l3", "h1", "restart")[0] == 0  # the kernel drops routes of a link going down
    assert vtopo(capsys, "link", "l2-vs-l3", "h3", "lan2", "down")[0] == 0
    assert "linkdown" in default_route("h3"), "a pulled cable leaves the route, unusable"
    assert vtopo(capsys, "link", "l2-vs-l3", "h3", "lan2", "up")[0] == 0
    assert "via 10.1.0.1" in default_route("h1") and "via 10.2.0.1" in default_route("h3"), "put back"
    assert wait_for(lambda: lab.pings("h1", "h3", count=1), 10)
    assert vtopo(capsys, "node", "l2-vs-l3", "r2", "stop")[0] == 0  # destroyed with a router stopped


def test_a_stopped_vm_is_powered_off_and_boots_again_on_the_same_taps(deployed, capsys):
    from tests.labs.test_vms import deploy_on, qemu_of, wait_ready

    lab = deploy_on(deployed, "vm-tap-vs-macvtap", "qemu")  # QEMU's own descriptors and command line are checked
    prefix = lab.lab.context.names.prefix
    for vm in ("vm1", "vm2"):
        wait_ready(prefix, vm)
    first = {vm: qemu_of(lab, vm) for vm in ("vm1", "vm2")}
    tap_index = int(Path(f"/sys/class/net/{prefix}-vm2-nic0/ifindex").read_text())
    assert lab.pings("host", "vm1")

    for vm in ("vm1", "vm2"):
        assert vtopo(capsys, "node", "vm-tap-vs-macvtap", vm, "stop")[0] == 0
        assert not Path(f"/proc/{first[vm]}").exists() or process_state(first[vm]) in "ZX", "QEMU has ended"
    assert not is_up(None, f"{prefix}-vm1-nic0") and not is_up(None, f"{prefix}-vm2-nic0")
    assert not lab.pings("host", "vm1", count=1)
    code, out, _ = vtopo(capsys, "status", "vm-tap-vs-macvtap")
    assert code == 0 and any(line.split()[:3] == ["node", "vm1", "stopped"] for line in out.splitlines()), out

    for vm in ("vm1", "vm2"):
        assert vtopo(capsys, "node", "vm-tap-vs-macvtap", vm, "start")[0] == 0
    for vm in ("vm1", "vm2"):
        wait_ready(prefix, vm)
        assert qemu_of(lab, vm) != first[vm]
    assert os.readlink(f"/proc/{qemu_of(lab, 'vm2')}/fd/3") == f"/dev/tap{tap_index}", "the same macvtap"
    assert f"iff:\t{prefix}-vm1-nic0" in Path(f"/proc/{qemu_of(lab, 'vm1')}/fdinfo/3").read_text(), "the same tap"
    assert wait_for(lambda: lab.pings("host", "vm1", count=1) and lab.pings("host", "vm2", count=1), 30)
    assert vtopo(capsys, "node", "vm-tap-vs-macvtap", "vm1", "stop")[0] == 0  # destroyed with a VM stopped


def test_cleanup_after_a_crash_removes_a_lab_with_a_node_stopped_and_a_link_down(capsys):
    from residue import snapshot
    from vtopo.host.deployer import Deployer
    from vtopo.lab import open_lab
    from vtopo.resources import TOPOLOGIES

    before = snapshot()
    Deployer().deploy(open_lab(TOPOLOGIES / "l2-vs-l3.vtopo").topology)
    lab = Deployer().store.named("l2-vs-l3")
    assert lab is not None
    netns = f"{lab.prefix}-h1"
    frozen = subprocess.Popen(["ip", "netns", "exec", netns, "sleep", "300"])
    assert vtopo(capsys, "node", "l2-vs-l3", "h1", "stop")[0] == 0
    assert vtopo(capsys, "node", "l2-vs-l3", "r1", "stop")[0] == 0
    assert vtopo(capsys, "link", "l2-vs-l3", "h3", "lan2", "down")[0] == 0
    code, out, _ = vtopo(capsys, "cleanup")
    assert code == 0 and "destroyed lab l2-vs-l3\n" in out and "stray" not in out
    assert frozen.wait(5) == -9
    assert snapshot() - before == {}
