"""Deploy is atomic from the user's view, repeats cleanly, refuses what it must, and crashes are recoverable."""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from crashes import deploy_killed_at_call, destroy_killed_at_call
from image_labs import TOOLBOX, engine_leftovers, own_images
from residue import open_fds, snapshot
from vtopo.host import preflight
from vtopo.host.applier import Applier, OpFailed
from vtopo.host.cleanup import cleanup
from vtopo.host.deployer import Deployer, DeployError
from vtopo.host.facts import netem_available
from vtopo.host.kernel_host import KernelHost
from vtopo.host.netlink import Netlink
from vtopo.host.oci_engine import EngineError
from vtopo.lab_terms import LabNames, default_prefix
from vtopo.host.preflight import PreflightFailed
from vtopo.host.state import LabTaken
from vtopo.lab import open_lab
from vtopo.model.problems import LabError
from vtopo.model.topology import Endpoint, Impairment, Interface, Link, Node, Topology
from vtopo.resources import TOPOLOGIES

pytestmark = pytest.mark.privileged

MIXED = Path(__file__).parents[1] / "data" / "mixed.vtopo"


def count_host_calls(monkeypatch, fail_at: int | None) -> list[str]:  # type: ignore[no-untyped-def]
    """Record each apply call's op type (an OVS batch is one call), and fail call number `fail_at` (from 1) as the
    kernel would."""
    calls: list[str] = []
    real_apply, real_batch = Applier.apply, Applier.apply_ovs_batch

    def maybe_fail(op):  # type: ignore[no-untyped-def]
        calls.append(type(op).__name__)
        if len(calls) == fail_at:
            raise OpFailed(op, "injected fault")

    def apply(self, op):  # type: ignore[no-untyped-def]
        maybe_fail(op)
        real_apply(self, op)

    def batch(self, ops):  # type: ignore[no-untyped-def]
        maybe_fail(ops[0])
        real_batch(self, ops)

    monkeypatch.setattr(Applier, "apply", apply)
    monkeypatch.setattr(Applier, "apply_ovs_batch", batch)
    return calls


def test_a_failure_at_each_kind_of_op_rolls_everything_back(monkeypatch):
    """A lab of containers, routers, OVS and macvlans: a failure at the first and at the last op of each kind (the
    first with nothing of its kind before it, the last with all of them to undo) rolls everything back."""
    topology = open_lab(MIXED).topology
    before = snapshot()
    calls = count_host_calls(monkeypatch, fail_at=None)
    Deployer().deploy(topology)
    Deployer().destroy(topology.name)
    kinds = set(calls)
    assert len(calls) > 30 and len(kinds) > 15
    firsts = {calls.index(kind) + 1 for kind in kinds}
    lasts = {len(calls) - calls[::-1].index(kind) for kind in kinds}
    for k in sorted(firsts | lasts):
        count_host_calls(monkeypatch, fail_at=k)
        with pytest.raises(DeployError) as failure:
            Deployer().deploy(topology)
        assert failure.value.rolled_back, failure.value.rollback_errors
        assert "injected fault" in str(failure.value) and failure.value.failure.op.owner in str(failure.value)
        assert snapshot() - before == {}, f"residue after a failure at call {k} of {len(calls)}"


def test_a_node_refused_among_image_nodes_started_together_rolls_everything_back(monkeypatch):
    """Image nodes start together, on a few threads (their OCI engine's processes): one refused among them, its
    companions started or not, leaves nothing of the lab, engine objects included."""
    own_images()
    topology = Topology(name="together")
    topology.add_node(Node(id="s", name="s", kind="bridge"))
    for index in range(6):
        topology.add_node(Node(id=f"t{index}", name=f"t{index}", kind="container", settings={"image": TOOLBOX}))
        topology.add_link(Link(id=f"l{index}", a=Endpoint(f"t{index}", "eth0",
                                                          Interface(addresses=[f"10.0.0.{index + 1}/24"])),
                               b=Endpoint("s", f"p{index + 1}")))
    real_run_image = KernelHost.run_image
    started: list[str] = []

    def run_image(self, **node):  # type: ignore[no-untyped-def]
        started.append(node["hostname"])
        if node["hostname"] == "t3":
            raise EngineError("node t3: injected fault")
        real_run_image(self, **node)

    monkeypatch.setattr(KernelHost, "run_image", run_image)
    before = snapshot()
    with pytest.raises(DeployError) as failure:
        Deployer().deploy(topology)
    assert failure.value.rolled_back, failure.value.rollback_errors
    assert "t3: could not run t3 from image" in str(failure.value), str(failure.value)
    assert sorted(started) == [f"t{index}" for index in range(6)]  # all started together: the others undone
    assert snapshot() - before == {} and engine_leftovers() == []


def test_destroy_removes_the_veths_of_a_namespace_something_still_holds():
    """A deleted namespace lives on while anything holds it (here an open descriptor; in practice a closing TCP
    connection of a process that ran there); its veths must still go."""
    topology = open_lab(TOPOLOGIES / "bridge-veth.vtopo").topology
    deployer = Deployer()
    before = snapshot()
    deployer.deploy(topology)
    held = os.open(f"/run/netns/{default_prefix(topology.name)}-c1", os.O_RDONLY)
    try:
        deployer.destroy(topology.name)
        assert snapshot() - before == {}
    finally:
        os.close(held)


def test_deploy_destroy_twenty_times_leaks_nothing():
    topology = open_lab(TOPOLOGIES / "bridge-veth.vtopo").topology
    deployer = Deployer()
    deployer.deploy(topology)
    deployer.destroy(topology.name)
    before, fds = snapshot(), open_fds()
    for _ in range(20):
        deployer.deploy(topology)
        deployer.destroy(topology.name)
    assert snapshot() - before == {}
    assert open_fds() <= fds


@contextmanager
def group_file_replaced_in_a_loop() -> Iterator[list[int]]:
    """A thread renames a new copy of /etc/group into place, again and again, as useradd and groupadd do, holding the
    lock they take (lckpwdf's, on /etc/.pwd.lock) while it does, so that an account they add meanwhile is kept; the
    list it gives counts the renames."""
    renames, stop = [0], threading.Event()

    def replace() -> None:
        copy = "/etc/.group.vtopo-test"
        with open("/etc/.pwd.lock", "wb") as lock:
            while not stop.is_set():
                fcntl.lockf(lock, fcntl.LOCK_EX)
                try:
                    for _ in range(50):
                        shutil.copy2("/etc/group", copy)
                        os.rename(copy, "/etc/group")
                        renames[0] += 1
                finally:
                    fcntl.lockf(lock, fcntl.LOCK_UN)
                stop.wait(0.002)  # a useradd waiting on the lock takes it

    thread = threading.Thread(target=replace, name="replace /etc/group")
    thread.start()
    try:
        yield renames
    finally:
        stop.set()
        thread.join()


def test_nodes_are_made_while_the_host_replaces_its_group_file():
    """Each node of a lab in a user namespace gets its own /etc/group, bound over the host's: a useradd meanwhile,
    which renames a new /etc/group into place, fails no node's mount (the kernel refuses a mount on the file just
    replaced, with ENOENT)."""
    topology = Topology(name="accounts-race")
    for index in range(30):
        topology.add_node(Node(id=f"c{index}", name=f"c{index}", kind="container"))
    deployer = Deployer()
    before = snapshot()
    with group_file_replaced_in_a_loop() as renames:
        for _ in range(5):
            deployer.deploy(topology)
            deployer.destroy(topology.name)
    assert renames[0] > 1000
    assert snapshot() - before == {}


def test_a_name_that_exists_on_the_host_is_refused_and_nothing_is_applied():
    topology = open_lab(TOPOLOGIES / "bridge-veth.vtopo").topology
    squatted = f"{default_prefix(topology.name)}-br0"
    with Netlink() as netlink:
        netlink.add_veth(squatted, None, "vtt-squat", None)
        try:
            before = snapshot()
            with pytest.raises(PreflightFailed, match=f"{squatted} already exists"):
                Deployer().deploy(topology)
            assert snapshot() - before == {}
        finally:
            netlink.delete_link(squatted, None)


def test_missing_privileges_and_tools_are_named_before_anything_runs(monkeypatch):
    topology = open_lab(TOPOLOGIES / "ovs-openflow.vtopo").topology
    before = snapshot()
    monkeypatch.setattr(preflight, "has_net_admin", lambda: False)
    with pytest.raises(PreflightFailed, match="needs root"):
        Deployer().deploy(topology)
    monkeypatch.undo()
    real_which = shutil.which
    monkeypatch.setattr(preflight.shutil, "which", lambda name: None if name.startswith("ovs-") else real_which(name))
    with pytest.raises(PreflightFailed, match="apt-get install openvswitch-switch"):
        Deployer().deploy(topology)
    assert snapshot() - before == {}


def test_deploying_a_lab_twice_is_refused():
    topology = open_lab(TOPOLOGIES / "macvlan-bridge.vtopo").topology
    deployer = Deployer()
    deployer.deploy(topology)
    try:
        with pytest.raises(LabTaken, match="a lab named macvlan-bridge is already deployed, by root"):
            deployer.deploy(topology)
    finally:
        deployer.destroy(topology.name)


def test_cleanup_recovers_a_deploy_killed_halfway():
    before = snapshot()
    assert deploy_killed_at_call(MIXED, 30) == 9
    assert snapshot() - before != {}, "the crash should have left the half-built lab"
    report = cleanup(Deployer(), lambda progress: None)
    assert report.labs == ["mixed"] and not report.errors
    assert snapshot() - before == {}


def test_cleanup_recovers_a_destroy_killed_halfway_and_removes_the_labs_namespaces_directory():
    topology = open_lab(TOPOLOGIES / "l2-vs-l3.vtopo").topology
    before = snapshot()
    deployer = Deployer()
    deployer.deploy(topology)
    record = deployer.store.named(topology.name)
    assert record is not None
    undo_calls = sum(op.inverse() is not None for op in record.journal())
    kept = Path(LabNames(record.prefix).namespaces_dir)
    assert len([path for path in kept.iterdir() if path.suffix == ".mnt"]) >= 2, "a mount namespace per node"
    assert destroy_killed_at_call(topology.name, undo_calls // 2) == 9
    assert kept.is_dir() and snapshot() - before != {}, "the crash should have left the half-destroyed lab"
    report = cleanup(Deployer(), lambda progress: None)
    assert report.labs == [topology.name] and not report.errors
    assert snapshot() - before == {} and not kept.exists() and not kept.parent.exists()
    assert not [line for line in Path("/proc/self/mountinfo").read_text().splitlines() if str(kept.parent) in line]


def test_cleanup_finds_objects_by_their_tags_when_the_journal_is_lost():
    topology = open_lab(TOPOLOGIES / "l2-vs-l3.vtopo").topology
    before = snapshot()
    deployer = Deployer()
    deployer.deploy(topology)
    shutil.rmtree(deployer.store.labs_dir)  # the labs' records and journals are gone: only the tags are left
    report = cleanup(Deployer(), lambda progress: None)
    prefix = default_prefix(topology.name)
    assert any(s.startswith(f"namespace {prefix}-") for s in report.strays)
    assert any(s.startswith(f"interface {prefix}-") for s in report.strays)
    assert any(s.startswith("process ") for s in report.strays)
    assert snapshot() - before == {}


def test_rate_limit_shows_in_iperf(deployed):
    topology = open_lab(TOPOLOGIES / "bridge-veth.vtopo").topology
    link = next(iter(topology.links.values()))
    topology.update_link(link.id, impairment=Impairment(rate_mbit=20))
    lab = deployed(topology)
    server = subprocess.Popen(lab.lab.command_in("c2", ["iperf3", "-s", "-1", "-p", "5302"]),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):
            if ":5302" in lab.run("c2", "ss", "-ltn").stdout:
                break
        result = lab.run("c1", "iperf3", "-c", lab.address("c1", "c2"), "-p", "5302", "-t", "2", "-J", timeout=20)
        received = json.loads(result.stdout)["end"]["sum_received"]["bits_per_second"]
        assert 5e6 < received < 25e6, received
    finally:
        server.kill()
        server.wait()


def test_a_delay_shows_in_ping_rtt_or_a_kernel_without_netem_refuses_the_lab_naming_the_link(deployed):
    """Where the kernel has netem the delay is applied; where it has not (this CI host), the host probe finds that
    out and the deploy is refused before it touches anything."""
    topology = open_lab(TOPOLOGIES / "bridge-veth.vtopo").topology
    link = next(iter(topology.links.values()))
    topology.update_link(link.id, impairment=Impairment(delay_ms=40))
    if not netem_available():
        before = snapshot()
        with pytest.raises(LabError, match="link c1:eth0-br0:p1: delay, jitter and loss need the kernel's netem"):
            Deployer().deploy(topology)
        assert snapshot() - before == {}
        return
    lab = deployed(topology)
    result = lab.run("c1", "ping", "-c", "3", "-i", "0.2", lab.address("c1", "c2"))
    average = float(result.stdout.rsplit("=", 1)[1].split("/")[1])
    assert average >= 40


def test_update_applies_only_what_an_edit_adds_or_changes():
    from vtopo.model.topology import Endpoint, Interface, Link, Node

    topology = open_lab(TOPOLOGIES / "bridge-veth.vtopo").topology
    deployer = Deployer()
    before = snapshot()
    deployer.deploy(topology)
    try:
        topology.add_node(Node(id="c4", name="c4", kind="container"))
        topology.add_link(Link(id="c4-link", a=Endpoint("c4", "eth0", Interface(addresses=["10.0.0.4/24"])),
                               b=Endpoint("br0", "p4")))
        report = deployer.update(topology)
        # c4's namespaces (2 ops), its veth made on the bridge, and its ends
        assert "only the" in report.notices[0] and report.ops == 6
        ping = subprocess.run(["ip", "netns", "exec", f"{default_prefix(topology.name)}-c4", "ping", "-c1", "-W1", "10.0.0.1"])
        assert ping.returncode == 0
        namespaces = set(os.listdir("/run/netns"))
        topology.update_link("c4-link", a=Interface(addresses=["10.0.0.44/24"]))
        report = deployer.update(topology)
        assert "only the" in report.notices[0], report.notices  # the old address goes, the new one comes
        assert set(os.listdir("/run/netns")) == namespaces, "no node was made again"
        shown = subprocess.run(["ip", "-n", f"{default_prefix(topology.name)}-c4", "-brief", "address", "show",
                                "eth0"], capture_output=True, text=True, check=True).stdout
        assert "10.0.0.44/24" in shown and "10.0.0.4/24" not in shown, shown
        ping = subprocess.run(["ip", "netns", "exec", f"{default_prefix(topology.name)}-c1", "ping", "-c1", "-W1", "10.0.0.44"])
        assert ping.returncode == 0
    finally:
        deployer.destroy(topology.name)
    assert snapshot() - before == {}
