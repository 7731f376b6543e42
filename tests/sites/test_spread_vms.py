"""VMs on another site: the lab's part there is deployed by that site's own agent onto that site's own libvirtd (a
simulated host's, scripts/sim-host.sh), and the VM is seen through libvirt's remote URI, which `vtopo status`
prints. One lab is deployed once for the first tests (a VM boot is slow under TCG): a VM on site b behind a bridge
there, linked across the tunnel to a container on this machine. Then: a site without libvirtd, whose agent runs the VM
as a QEMU process; cleanup on a site whose agent was killed; a simulated host's libvirtd ending with it."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from residue import Residue, snapshot
from sites.simulated import SimulatedHost, Sites
from spread_labs import LabBuilder, here
from vtopo.cli.sites import remote_libvirt_uri
from vtopo.host.libvirtd import LibvirtService
from vtopo.model.sites import Site

LAB = "farvm"
BOOT_SECONDS = 90


@dataclass
class FarVm:
    """The deployed lab: the VM's libvirt domain and directory on site b."""

    sites: Sites
    prefix: str
    before: Residue  # this machine, before the deploy
    destroyed: bool = False

    @property
    def domain(self) -> str:
        return f"{self.prefix}-vm1"

    @property
    def node_dir(self) -> Path:
        """The VM's run directory as site b has it (its /run/vtopo is this directory of the simulated host)."""
        return self.sites.b.directory / "run" / self.prefix / "vm1"

    def run_in(self, node: str, *argv: str) -> subprocess.CompletedProcess[str]:
        """`argv` in a node, from this machine (`vtopo exec`, which runs it on the node's own site)."""
        return self.sites.agent.vtopo(None, "exec", LAB, node, "--", *argv, timeout=60)


def remote_virsh(host: SimulatedHost, uri: str, *args: str) -> subprocess.CompletedProcess[str]:
    """virsh at `uri` as a user of this machine who knows the site's host key: in a mount namespace of its own whose
    ~/.ssh/known_hosts is the one the simulated host printed, so that ssh checks the key strictly and writes nothing
    here."""
    script = ('mount -t tmpfs -o mode=0700 vtopo-test "$HOME" && mkdir -m 0700 "$HOME/.ssh" && '
              'cp "$1" "$HOME/.ssh/known_hosts" && shift && exec virsh -q -c "$@"')
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
                           str(host.directory / "ssh" / "known_hosts"), uri, *args], capture_output=True, text=True,
                          timeout=60, env={"HOME": "/root", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})


def domains_here() -> list[str]:
    """The domains of this machine's libvirtd (the libvirtd fixture runs it)."""
    return subprocess.run(["virsh", "-q", "-c", "qemu:///system", "list", "--all", "--name"], capture_output=True,
                          text=True, check=True).stdout.split()


def libvirt_uri(host: SimulatedHost) -> str:
    """Site b's libvirtd, from this machine: through ssh, with the key the simulated host made."""
    return f"qemu+ssh://root@{host.address}:22/system?keyfile={host.directory}/ssh/id_ed25519"


def printed_uri(status: str) -> str:
    """The libvirt URI `vtopo status` gives for vm1."""
    found = re.search(r"virsh -c '([^']+)'", status)
    assert found, status
    return found.group(1)


def farvm_lab(sites: Sites) -> LabBuilder:
    lab = sites.builder(LAB)
    lab.node("c1", "container")
    lab.node("br0", "bridge", site="b")
    lab.node("vm1", "vm", site="b")
    lab.link("c1", "br0", "10.0.5.1/24")
    lab.link("vm1", "br0", "10.0.5.2/24")
    return lab


def destroy(far: FarVm) -> subprocess.CompletedProcess[str]:
    far.destroyed = True
    return far.sites.vtopo("destroy", LAB)


@pytest.fixture(scope="module")
def far(sites: Sites, libvirtd: LibvirtService) -> Iterator[FarVm]:
    """The lab, deployed from this machine; destroyed by the last test, or here when that did not run."""
    before = snapshot()  # with this machine's libvirtd running (the libvirtd fixture), which must never see the VM
    started = time.monotonic()
    deploying = sites.deploy(farvm_lab(sites))
    assert deploying.returncode == 0, deploying.stderr
    far = FarVm(sites, "", before)
    try:
        far.prefix = prefix_on("b", LAB, deploying.stdout)
        deployed = time.monotonic()
        wait_booted(far.node_dir)
        print(f"deployed over two sites in {deployed - started:.1f} s; vm1 booted on site b "
              f"{time.monotonic() - deployed:.1f} s later")
        yield far
    finally:
        if not far.destroyed:
            destroy(far)


def wait_booted(node_dir: Path) -> None:
    """Until the guest says it is ready on its serial console (`node_dir`: the VM's run directory on its site)."""
    console = node_dir / "console.log"
    deadline = time.monotonic() + BOOT_SECONDS
    while "vtopo-guest ready" not in (console.read_text(errors="replace") if console.exists() else ""):
        assert time.monotonic() < deadline, f"the VM did not boot within {BOOT_SECONDS} s"
        time.sleep(0.25)


def prefix_on(site: str, lab: str, said: str) -> str:
    """The prefix of a site's part of a lab, from what `vtopo deploy` said."""
    found = re.search(rf"deployed site {site}'s part of lab {lab} \(prefix (\S+)\)", said)
    assert found, said
    return found.group(1)


def in_network_of(pid_file: Path, host: SimulatedHost) -> bool:
    """Whether the process of `pid_file` runs in the simulated host's network namespace."""
    pid = int(pid_file.read_text().split()[0])
    holder = int((host.directory / "holder.pid").read_text())
    return Path(f"/proc/{pid}/ns/net").readlink() == Path(f"/proc/{holder}/ns/net").readlink()


@pytest.mark.privileged
def test_the_vm_is_a_domain_of_its_sites_libvirtd_on_a_tap_there(far: FarVm):
    b = far.sites.b
    state = remote_virsh(b, libvirt_uri(b), "domstate", far.domain)
    assert state.stdout.strip() == "running", state.stdout + state.stderr
    assert far.domain not in domains_here(), "this machine's libvirtd never sees site b's VM"
    tap = f"{far.prefix}-vm1-nic0"
    details = b.run("ip", "-d", "link", "show", tap).stdout
    assert "tun type tap" in details and "master " in details, details
    assert not Path(f"/sys/class/net/{tap}").exists(), "the tap is in site b's network namespace, not here"
    assert in_network_of(b.directory / "libvirt" / "run" / "qemu" / f"{far.domain}.pid", b), \
        "QEMU runs in site b's network namespace, where libvirtd opened the tap"


@pytest.mark.privileged
def test_pings_cross_the_tunnel_both_ways(far: FarVm):
    assert far.run_in("c1", "ping", "-c", "2", "-i", "0.2", "-W", "2", "10.0.5.2").returncode == 0
    assert far.run_in("vm1", "ping", "-c", "2", "-i", "0.2", "-W", "2", "10.0.5.1").returncode == 0


@pytest.mark.privileged
def test_console_and_exec_reach_the_vm_on_its_site(far: FarVm):
    typed = subprocess.run([sys.executable, "-m", "vtopo", "console", LAB, "vm1"], input="echo vtopo-$((6*7))\n",
                           env=far.sites.agent.env, capture_output=True, text=True, timeout=60, cwd="/")
    assert typed.returncode == 0 and "vtopo-42" in typed.stdout, typed.stdout + typed.stderr
    addresses = far.run_in("vm1", "ip", "-4", "-o", "addr", "show", "eth0")
    assert addresses.returncode == 0 and "10.0.5.2/24" in addresses.stdout, addresses.stdout + addresses.stderr


@pytest.mark.privileged
def test_status_shows_the_vm_running_and_the_uri_to_open_it_with(far: FarVm):
    status = far.sites.vtopo("status", LAB)
    assert status.returncode == 0, status.stdout + status.stderr
    site_b = status.stdout.split("site b:", 1)[1]
    assert re.search(r"node vm1 +running", site_b), status.stdout
    uri = printed_uri(status.stdout)
    assert uri == libvirt_uri(far.sites.b), status.stdout
    info = remote_virsh(far.sites.b, uri, "dominfo", far.domain)
    assert re.search(r"State: +running", info.stdout), info.stdout + info.stderr


@pytest.mark.privileged
def test_destroy_leaves_nothing_on_either_host(far: FarVm):
    uri = printed_uri(far.sites.vtopo("status", LAB).stdout)
    destroyed = destroy(far)
    assert destroyed.returncode == 0, destroyed.stderr
    assert "destroyed site b's part of lab farvm" in destroyed.stdout
    listed = remote_virsh(far.sites.b, uri, "list", "--all", "--name")
    assert listed.returncode == 0 and far.prefix not in listed.stdout, listed.stdout + listed.stderr
    assert not any((far.sites.b.directory / "libvirt" / "log" / "qemu").iterdir()), "site b keeps the VM's log"
    assert far.sites.residue() == {}, "a simulated host keeps something of the lab"
    assert snapshot() - far.before == {}, "this machine keeps something of the lab"


@pytest.mark.privileged
def test_a_vm_on_a_site_without_libvirtd_runs_as_a_qemu_process_of_that_sites_agent(
        sites: Sites, libvirtd: LibvirtService, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("VTOPO_SIM_LIBVIRTD", "0")
    host = SimulatedHost.up("plain")
    monkeypatch.delenv("VTOPO_SIM_LIBVIRTD")
    try:
        before = snapshot()
        lab = LabBuilder("plainvm", [here(), host.site])
        lab.node("c1", "container")
        lab.node("br0", "bridge", site="plain")
        lab.node("vm1", "vm", site="plain")
        lab.link("c1", "br0", "10.0.6.1/24")
        lab.link("vm1", "br0", "10.0.6.2/24")
        deploying = sites.agent.vtopo(None, "deploy", str(sites.save(lab)), "--allow-site", "plain", timeout=240)
        assert deploying.returncode == 0, deploying.stderr
        try:
            node_dir = host.directory / "run" / prefix_on("plain", "plainvm", deploying.stdout) / "vm1"
            wait_booted(node_dir)
            assert host.run("virsh", "-c", "qemu:///system", "list").returncode != 0, "no libvirtd answers there"
            assert in_network_of(node_dir / "qemu.pid", host), "the agent there started QEMU in its network"
            pinged = sites.agent.vtopo(None, "exec", "plainvm", "c1", "--", "ping", "-c", "2", "-i", "0.2", "-W", "2",
                                       "10.0.6.2")
            assert pinged.returncode == 0, pinged.stdout + pinged.stderr
            status = sites.vtopo("status", "plainvm").stdout
            assert re.search(r"node vm1 +running", status.split("site plain:", 1)[1]) and "virsh" not in status, status
        finally:
            destroyed = sites.vtopo("destroy", "plainvm")
        assert destroyed.returncode == 0, destroyed.stderr
        assert host.residue() == [], "the site keeps something of the lab"
        assert snapshot() - before == {}, "this machine keeps something of the lab"
    finally:
        host.down()


@pytest.mark.privileged
def test_cleanup_on_a_site_whose_agent_was_killed_ends_the_vm_in_that_sites_libvirtd(sites: Sites):
    c, before = sites.c, snapshot()
    lab = sites.builder("killedvm")
    lab.node("c1", "container")
    lab.node("br0", "bridge", site="c")
    lab.node("vm1", "vm", site="c")
    lab.link("c1", "br0", "10.0.7.1/24")
    lab.link("vm1", "br0", "10.0.7.2/24")
    deploying = sites.deploy(lab)
    assert deploying.returncode == 0, deploying.stderr
    domain = f"{prefix_on('c', 'killedvm', deploying.stdout)}-vm1"
    try:
        assert domain in c.run("virsh", "-q", "-c", "qemu:///system", "list", "--name").stdout.split()
        os.kill(c.agent_pid, signal.SIGKILL)
        cleaned = c.vtopo("cleanup")
        assert cleaned.returncode == 0 and "destroyed lab killedvm" in cleaned.stdout, cleaned.stdout + cleaned.stderr
        assert c.run("virsh", "-q", "-c", "qemu:///system", "list", "--all", "--name").stdout.split() == []
        assert c.residue() == [], "cleanup on site c leaves something of the lab"
    finally:
        c.start_agent()
        destroyed = sites.vtopo("destroy", "killedvm")
    assert destroyed.returncode == 0 and "site c had nothing left of lab killedvm" in destroyed.stdout, \
        destroyed.stdout + destroyed.stderr
    assert snapshot() - before == {}, "this machine keeps something of the lab"


IDLE_DOMAIN = """<domain type='qemu'><name>vtopo-sim-idle</name><memory unit='MiB'>32</memory>
<os><type arch='x86_64'>hvm</type></os><devices/></domain>"""  # firmware with nothing to boot: it idles


def alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists() and "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()


@pytest.mark.privileged
def test_a_simulated_hosts_libvirtd_and_its_domains_end_with_it(tmp_path: Path, libvirtd: LibvirtService):
    """Its libvirtd answers inside it only (this machine's never sees its domains); `down` ends the domains it still
    runs, then libvirtd and virtlogd."""
    host = SimulatedHost.up("lv")
    try:
        daemons = [int((host.directory / "libvirt" / f"{name}.pid").read_text()) for name in ("libvirtd", "virtlogd")]
        definition = tmp_path / "idle.xml"
        definition.write_text(IDLE_DOMAIN)
        started = host.run("virsh", "-q", "-c", "qemu:///system", "create", str(definition))
        assert started.returncode == 0, started.stderr
        qemu = int((host.directory / "libvirt" / "run" / "qemu" / "vtopo-sim-idle.pid").read_text())
        assert "vtopo-sim-idle" not in domains_here()
    finally:
        host.down()
    assert not [pid for pid in [*daemons, qemu] if alive(pid)], "down leaves a process of the host's libvirt"


@pytest.mark.parametrize("site, uri", [
    (Site("b", "alice@lab-b.example.org", identity="/home/alice/.ssh/id ed25519"),
     "qemu+ssh://alice@lab-b.example.org:22/system?keyfile=/home/alice/.ssh/id%20ed25519"),
    (Site("b", "lab-b", port=2222), "qemu+ssh://lab-b:2222/system"),
    (Site("b", "root@fd00::2"), "qemu+ssh://root@[fd00::2]:22/system"),
])
def test_the_uri_of_another_sites_libvirtd_reaches_it_over_ssh_as_the_site_says(site: Site, uri: str):
    assert remote_libvirt_uri("qemu:///system", site) == uri


def test_a_libvirt_uri_that_names_its_own_host_or_transport_stays_as_the_site_has_it():
    site = Site("b", "alice@lab-b", identity="/k")
    assert remote_libvirt_uri("qemu+tcp://10.0.0.9/system", site) == "qemu+tcp://10.0.0.9/system"
    assert remote_libvirt_uri("qemu:///session?socket=/s", site) == \
        "qemu+ssh://alice@lab-b:22/session?socket=/s&keyfile=/k"
