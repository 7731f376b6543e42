"""What this host offers, probed once before compiling: OVS datapath, vhost-net, DPDK, KVM, netem, bridge VLAN
filtering, 802.1Q VLAN devices, FRR or Quagga."""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

from vtopo.lab_terms import HostFacts, Trust
from vtopo.kinds.contract import RunsMachine
from vtopo.kinds.registry import Registry
from vtopo.model.rules import LAB_TAG_PREFIX
from vtopo.model.topology import Topology

KVM_PROBE_SECONDS = 3.0
PROBE_NAME = "vtopo-kvm-probe-of-"  # + the pid of the vtopo process that runs the probe
QUAGGA_DIRS = ("/usr/lib/quagga", "/usr/sbin")


def routing_suite() -> tuple[str, str, str]:
    """(suite, daemon directory, daemon user): FRR, or Quagga when only Quagga is installed."""
    for directory in QUAGGA_DIRS:
        if not Path("/usr/lib/frr/zebra").exists() and Path(directory, "zebra").exists():
            return "quagga", directory, "quagga"
    return "frr", "/usr/lib/frr", "frr"


def kernel_config() -> str | None:
    """The running kernel's build configuration, from /proc/config.gz or /boot/config-RELEASE; None where neither
    can be read (yet: loading the `configs` module makes /proc/config.gz). What was read is kept for the process: it
    is the running kernel's, which changes only when the host boots another (a probe of the host asks three times,
    and each unzipping took ~1 ms)."""
    if _kernel_config:
        return _kernel_config[0]
    import gzip

    try:
        with gzip.open("/proc/config.gz", "rt") as config:
            text = config.read()
    except OSError:
        try:
            text = Path(f"/boot/config-{os.uname().release}").read_text()
        except OSError:
            return None
    _kernel_config.append(text)
    return text


_kernel_config: list[str] = []  # kernel_config()'s text, once read


def netem_available() -> bool:
    if Path("/sys/module/sch_netem").exists():
        return True
    config = kernel_config()
    if config is not None:
        return "\nCONFIG_NET_SCH_NETEM=" in config
    return subprocess.run(["modprobe", "-n", "sch_netem"], capture_output=True).returncode == 0


def bridge_vlan_filtering() -> bool:
    """The kernel's bridges can filter VLANs (a build option of the bridge itself, which no module adds). Where the
    configuration cannot be read the kernel is taken to have it, as stock kernels do: a deploy then says if not."""
    config = kernel_config()
    return config is None or "\nCONFIG_BRIDGE_VLAN_FILTERING=y" in config


def vlan_devices() -> bool:
    """The kernel makes 802.1Q VLAN devices: 8021q is loaded, or built in or as a module. Where the configuration
    cannot be read the kernel is taken to have it, as stock kernels do: a deploy then says if not."""
    if Path("/sys/module/8021q").exists():
        return True
    config = kernel_config()
    return config is None or any(f"\nCONFIG_VLAN_8021Q={how}" in config for how in "ym")


def kvm_usable(guest_dir: str) -> bool:
    """/dev/kvm can be there and a KVM guest still hang, so boot the guest kernel for a moment under KVM.

    A working KVM prints the kernel's banner on the serial console within a fraction of a second. The probe runs
    under `timeout -s KILL`, a deadline that holds even if vtopo itself is killed, and carries its owner's pid in
    its name, so `vtopo cleanup` can tell an orphaned probe (see :func:`orphaned_probes`).
    """
    kernel = Path(guest_dir, "vmlinuz")
    if not os.path.exists("/dev/kvm") or shutil.which("qemu-system-x86_64") is None or not kernel.exists():
        return False
    argv = ["timeout", "--signal=KILL", f"{KVM_PROBE_SECONDS:g}",
            "qemu-system-x86_64", "-name", f"{PROBE_NAME}{os.getpid()}", "-machine", "q35,accel=kvm", "-m", "128",
            "-nodefaults", "-display", "none", "-serial", "stdio", "-no-reboot", "-kernel", str(kernel),
            "-append", "console=ttyS0 panic=-1 init=/nonexistent"]
    probe = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=KVM_PROBE_SECONDS + 5)
    return b"Linux version" in probe.stdout


def orphaned_probes() -> list[int]:
    """Pids of KVM probes (and their `timeout` wrappers) whose vtopo process is gone."""
    orphans = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        owner = next((arg[len(PROBE_NAME):] for arg in argv if arg.startswith(PROBE_NAME)), None)
        if owner is not None and owner.isdigit() and not Path("/proc", owner).exists():
            orphans.append(int(entry.name))
    return orphans


def ovs_dpdk_initialised() -> bool:
    """The running ovs-vswitchd is the DPDK build and has initialised DPDK."""
    from vtopo.host import ovs

    if not ovs.OvsService().running():
        return False
    try:
        return ovs.vsctl([["get", "Open_vSwitch", ".", "dpdk_initialized"]]).strip() == "true"
    except ovs.OvsError:
        return False


def libvirt_uri() -> str:
    """The user's libvirt connection (VTOPO_LIBVIRT_URI). A lab file cannot choose it: a shared file must not send
    the user's VMs to another host."""
    return os.environ.get("VTOPO_LIBVIRT_URI") or HostFacts.libvirt_uri


def probe(needs_accel: bool = False) -> HostFacts:
    """`needs_accel`: the lab has VMs, so probe KVM and libvirtd too (whose module loads only then)."""
    from vtopo.host.ovs import OvsService, userspace_tso_off

    suite, daemons, user = routing_suite()
    guest_dir = os.environ.get("VTOPO_GUEST_DIR", HostFacts.guest_dir)
    uri = libvirt_uri()
    libvirt = False
    if needs_accel:
        from vtopo.host.libvirtd import answers

        libvirt = answers(uri)
    return HostFacts(
        ovs_datapath=OvsService().default_datapath(),
        vhost_net=os.path.exists("/dev/vhost-net"),
        ovs_dpdk=needs_accel and ovs_dpdk_initialised(),
        ovs_tso_off=userspace_tso_off(),
        netem=netem_available(),
        bridge_vlans=bridge_vlan_filtering(),
        vlan_devices=vlan_devices(),
        accel="kvm" if needs_accel and kvm_usable(guest_dir) else "tcg",
        guest_dir=guest_dir,
        frr_dir=daemons,
        routing_suite=suite,
        frr_user=user,
        libvirt=libvirt,
        libvirt_uri=uri,
        memory_mb=os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20,
        cpus=os.cpu_count() or 0,
        probed=True,
    )


def runs_vms(topology: Topology, kinds: Registry) -> bool:
    """Whether the lab has a virtual machine, which wants hardware acceleration."""
    found = (kinds.get(node.kind) for node in topology.nodes.values())
    return any(isinstance(kind, RunsMachine) for kind in found)


def probe_for(topology: Topology, kinds: Registry, uid: int | None = None) -> HostFacts:
    """The facts `topology` is compiled against, for a lab of `uid` (by default the caller's): KVM and libvirtd are
    probed only for a lab with VMs; the OCI images its nodes name, as that uid finds them."""
    named = [str(node.settings["image"]) for node in topology.nodes.values() if node.settings.get("image")]
    facts = probe(needs_accel=runs_vms(topology, kinds))
    if not named:  # the image store is read only for a lab whose nodes name images
        return facts
    from vtopo.host import image_store

    return replace(facts, oci_images=image_store.available(named, os.geteuid() if uid is None else uid))


def with_host_network(consent: Trust) -> Trust:
    """The user's consent with the host's own network added: its interfaces, the addresses and routes that are not
    on an interface of any lab (the default routes left out: every lab address lies inside them), and every address
    it has."""
    from vtopo.host import netlink  # pyroute2, only for a deploy

    interfaces, networks, addresses = netlink.host_network(LAB_TAG_PREFIX)
    return replace(consent, host_interfaces=interfaces, host_networks=networks, host_addresses=addresses)


def route_device(address: str) -> str | None:
    """The interface the host's own routing sends `address` out of; None when it has no route to it."""
    from pyroute2 import IPRoute  # here: what reads the host's facts at startup does not load pyroute2
    from pyroute2.netlink.exceptions import NetlinkError

    try:
        with IPRoute() as ipr:
            route = ipr.route("get", dst=address)[0]
            device: str = ipr.link("get", index=route.get_attr("RTA_OIF"))[0].get_attr("IFLA_IFNAME")
    except (NetlinkError, ValueError, IndexError):
        return None
    return device
