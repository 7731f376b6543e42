"""Consent through the agent, as a member of the vtopo group gives it: the startup commands of their own lab run as
root of the lab's user namespace (uid 0 inside, the member outside), inside the node, at the deploy and again at a
restart, which shows what they printed; a host device is refused in one line that says who may allow it, before
anything is built."""
from __future__ import annotations


import pytest

from residue import snapshot
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged


def test_a_members_startup_commands_run_as_them_and_a_host_device_is_roots_to_give(agent, users, readable_dir):
    a = users["a"].pw_name
    topology = io.load(TOPOLOGIES / "bridge-veth.vtopo")
    next(node for node in topology.nodes.values() if node.name == "c1").startup_commands = [
        "id -u", "awk '{print $2}' /proc/self/uid_map", "test -w /root || echo cannot write /root"]
    lab = readable_dir / "startup.vtopo"
    io.save(topology, lab)
    lab.chmod(0o644)
    before = snapshot()

    device = agent.vtopo(a, "deploy", str(lab), "--allow-commands", "c1", "--allow-host-device", "eth0")
    assert device.returncode == 1 and device.stderr.strip().startswith(
        "error: --allow-host-device eth0: only root may hand a host device to a lab"), device.stderr
    assert 'host_devices = ["eth0"]' in device.stderr and snapshot() - before == {}

    deployed = agent.vtopo(a, "deploy", str(lab), "--allow-commands", "c1")
    try:
        assert deployed.returncode == 0, deployed.stderr
        said = deployed.stdout + deployed.stderr
        assert f"  c1| 0\n  c1| $ awk '{{print $2}}' /proc/self/uid_map\n  c1| {users['a'].pw_uid}\n" in said, said
        assert "  c1| cannot write /root" in said, said
        restarted = agent.vtopo(a, "node", "bridge-veth", "c1", "restart")  # they run again, as a, and say so
        assert restarted.stdout.splitlines() == ["restarted c1 in lab bridge-veth", "  c1| $ id -u", "  c1| 0",
                                                 "  c1| $ awk '{print $2}' /proc/self/uid_map",
                                                 f"  c1| {users['a'].pw_uid}",
                                                 "  c1| $ test -w /root || echo cannot write /root",
                                                 "  c1| cannot write /root"], restarted.stdout + restarted.stderr
    finally:
        destroyed = agent.vtopo(a, "destroy", "bridge-veth")
    assert destroyed.returncode == 0, destroyed.stderr
    assert snapshot() - before == {}
