"""An OVS switch on the userspace datapath reaching its containers through its own internal ports (the default) or
through veths read with AF_XDP (the `ports: afxdp` setting)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.labs.test_labs import wait_for
from vtopo.host.ovs import USERSPACE_TSO, userspace_tso_off
from vtopo.model import io
from vtopo.lab_operations import OperateError, set_link_impairment
from vtopo.model.impairment_change import ImpairmentChange
from vtopo.model.topology import Endpoint, Impairment, Interface, Link, Node, Topology

pytestmark = pytest.mark.privileged


def ovs_lab(ports: str, impaired: bool = False) -> Topology:
    topology = Topology(name=f"ovs-{ports}")
    topology.add_node(Node(id="sw", name="sw", kind="ovs", settings={"ports": ports}))
    for port, node in enumerate(("c1", "c2", "c3"), start=1):
        topology.add_node(Node(id=node, name=node, kind="container"))
        topology.add_link(Link(id=f"{node}-sw", a=Endpoint(node, "eth0", Interface(addresses=[f"10.83.0.{port}/24"])),
                               b=Endpoint("sw", f"p{port}")))
    if impaired:
        topology.update_link("c3-sw", impairment=Impairment(rate_mbit=50))
    return topology


def interface_types(prefix: str) -> dict[str, str]:
    rows = json.loads(subprocess.run(["ovs-vsctl", "--format=json", "--columns=name,type", "find", "Interface",
                                      f'external_ids:vtopo-lab="{prefix}"'], capture_output=True, text=True).stdout)
    return {name: kind for name, kind in rows["data"]}


def test_internal_ports_are_the_containers_interfaces_and_an_impaired_link_keeps_a_veth(deployed):
    lab = deployed(ovs_lab("internal", impaired=True))
    prefix = lab.lab.context.names.prefix
    assert interface_types(prefix) == {f"{prefix}-sw-p1": "internal", f"{prefix}-sw-p2": "internal",
                                       f"{prefix}-sw-p3": ""}, "the impaired link's port is a veth's host end"
    inside = lab.run("c1", "ip", "-d", "link", "show", "eth0").stdout
    assert "tun type tap" in inside, inside
    host = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert f"{prefix}-sw-p1" not in host and f"{prefix}-sw-p3" in host
    assert lab.pings("c1", "c2") and lab.pings("c1", "c3")
    assert tcp_sent(lab, "c1", "c2", "10.83.0.2", 5301)["retransmits"] < 100
    with pytest.raises(OperateError, match="is the switch's own port, which has no queue"):
        set_link_impairment("ovs-internal", "c1", "sw", ImpairmentChange(rate_mbit=10))
    assert "qdisc tbf" not in lab.run("c1", "tc", "qdisc", "show", "dev", "eth0").stdout
    set_link_impairment("ovs-internal", "c3", "sw", ImpairmentChange(rate_mbit=0))  # the impaired link's rate set back to none, live
    verified = subprocess.run([sys.executable, "-m", "vtopo", "status", "ovs-internal", "--verify"],
                              capture_output=True, text=True, timeout=120)  # the lab resolved again, from its record
    assert verified.returncode == 0 and "degraded" not in verified.stdout, verified.stdout + verified.stderr
    assert lab.pings("c1", "c3")


def test_afxdp_ports_carry_tcp_losing_almost_nothing(deployed):
    """ovs-vswitchd's main thread polls AF_XDP ports; while it waits for a busy CPU, a port's 2,048-frame ring
    overflows and the veth drops what XDP could not hand over (rx_queue_0_drops in its `ethtool -S`). Beside a
    busy loop that is a few hundred of some 500,000 segments in 2 s; system ports lose about an eighth."""
    lab = deployed(ovs_lab("afxdp"))
    prefix = lab.lab.context.names.prefix
    assert set(interface_types(prefix).values()) == {"afxdp-nonpmd"}
    assert lab.pings("c1", "c2")
    sent = tcp_sent(lab, "c1", "c2", "10.83.0.2", 5302)
    assert sent["retransmits"] < 0.01 * sent["bytes"] / TCP_SEGMENT_BYTES, sent


TCP_SEGMENT_BYTES = 1448  # an MTU of 1,500 less the IP and TCP headers with timestamps


def tcp_sent(lab, client: str, server_node: str, address: str, port: int) -> dict:
    """iperf3's summary of what `client` sent to `server_node` over TCP in 2 s, the data having arrived."""
    server = subprocess.Popen(lab.lab.command_in(server_node, ["iperf3", "-s", "-1", "-p", str(port)]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: f":{port}" in lab.run(server_node, "ss", "-ltn").stdout, 5)
        result = lab.run(client, "iperf3", "-c", address, "-p", str(port), "-t", "2", "-J", timeout=20)
        assert result.returncode == 0, result.stdout[-500:]
        end = json.loads(result.stdout)["end"]
        assert end["sum_received"]["bits_per_second"] > 1e6
        return end["sum_sent"]
    finally:
        server.kill()
        server.wait()


def test_an_open_vswitch_with_userspace_tso_off_is_named_when_validating(deployed, tmp_path: Path):
    deployed(ovs_lab("internal"))  # vtopo starts OVS, with userspace TSO on
    lab_file = tmp_path / "lab.vtopo"
    io.save(ovs_lab("system"), lab_file)

    def warnings() -> str:
        checked = subprocess.run([sys.executable, "-m", "vtopo", "validate", str(lab_file)], capture_output=True,
                                 text=True, timeout=60)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        return checked.stdout + checked.stderr

    assert not userspace_tso_off() and "userspace TSO off" not in warnings()
    subprocess.run(["ovs-vsctl", "set", "Open_vSwitch", ".", f"other_config:{USERSPACE_TSO}=false"], check=True)
    try:
        assert userspace_tso_off()
        shown = warnings()
        assert "node sw" in shown and "has userspace TSO off" in shown and "userspace-tso-enable=true" in shown, \
            shown
    finally:
        subprocess.run(["ovs-vsctl", "set", "Open_vSwitch", ".", f"other_config:{USERSPACE_TSO}=true"], check=True)
