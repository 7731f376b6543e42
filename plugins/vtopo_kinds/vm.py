"""A QEMU virtual machine. NICs are backed by a tap (on a bridge, OVS or the host), a macvtap (the tap-vs-macvtap
experiment) or vhost-user to an OVS-DPDK port (the OVS vhost-user experiment). vhost-net can be turned on or off per
VM (the vhost-net experiment).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Iterable

from vtopo.kinds import api
from vtopo.kinds.api import (ECHO_SERVER, IPERF3_SERVER, KVM_GROUP, CannotRunInside, ConsentRequest, EndContext,
                             ForwardsInUserspace, NodeContext, NodeKind, PortSpec, Problem, Role, RunsMachine, Severity,
                             setting, subinterface_name)
from vtopo_kinds.common import check_default_routes

FIRST_TAP_FD = 3  # NIC i's tap or macvtap is on fd 3 + i (at most 8 NICs)
FIRST_VHOST_FD = 11  # its /dev/vhost-net on fd 11 + i
IMAGE_FD = 20
IMAGE_FDSET = 1
SANDBOX = "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"
"""QEMU's seccomp filter: no obsolete system calls, no setuid or capability changes, no fork or exec, no CPU
affinity or scheduler changes. QEMU starts as the unprivileged vtopo-qemu user with every file it needs already open,
in the foreground, so it needs none of these."""
QMP_GREETING = '{"QMP":'
"""How QEMU's monitor greets a client, once the machine is set up and QEMU runs its main loop: QEMU is ready."""
GUEST_SERVERS = {IPERF3_SERVER: 5201, ECHO_SERVER: 5202}
"""What the built-in guest's init starts: `iperf3 -s` on iperf3's default port, and an echo server."""
NIC_DEVICES = {"virtio": "virtio-net-pci", "e1000": "e1000"}


@dataclass(frozen=True)
class VmSettings:
    vcpus: int = setting(1, "vCPUs", minimum=1, maximum=64)
    memory_mb: int = setting(256, "Memory (MiB)", minimum=64, maximum=1_048_576)
    image: str = setting("builtin", "Disk image", "builtin: vtopo's small guest (a kernel and a busybox initrd with "
                         "iperf3). Or a raw or .qcow2 disk image, booted as a snapshot: a file name in vtopo's images "
                         "directory, or an absolute path the user allows when deploying.")
    nic_model: str = setting("virtio", "NIC model", choices=tuple(NIC_DEVICES))
    vhost: bool = setting(True, "vhost-net", "Let the kernel's vhost-net move packets instead of QEMU (the vhost-net "
                          "experiment)")
    vhost_user: bool = setting(False, "vhost-user to OVS", "NICs on an OVS switch use a dpdkvhostuser port (the OVS "
                               "vhost-user experiment); needs OVS with DPDK and hugepages")
    default_route: str = setting("", "Default gateway", "Next hop for the guest's default route (built-in guest)")
    default_route6: str = setting("", "IPv6 default gateway", "Next hop for the guest's IPv6 default route, e.g. "
                                  "2001:db8:1::1 (built-in guest)")
    forwarding: bool = setting(False, "IP forwarding", "The guest routes between its NICs: a Linux router "
                               "gateway, as in the host-networking experiment (built-in guest)")


class VmKind(NodeKind[VmSettings], RunsMachine[VmSettings]):
    name = "vm"
    label = "Virtual machine"
    description = "A QEMU/KVM virtual machine with virtio or e1000 NICs on taps, macvtaps or vhost-user."
    role = Role.MACHINE
    gateway_setting = "default_route"
    ports = PortSpec("nic", 0, limit=8)
    connects_to = frozenset({"bridge", "ovs", "macvtap", "host", "vm", "container", "router"})
    connect_hint = "A VM's NICs join bridges, OVS switches, macvtap segments, the host, containers, routers and " \
                   "other VMs."
    settings_type = VmSettings

    def command_in(self, node: NodeContext[VmSettings], argv: list[str]) -> list[str]:
        """Typed into the built-in guest's root shell on the serial console (see vtopo.serial_console)."""
        if node.settings.image != api.BUILTIN_IMAGE:
            raise CannotRunInside(f"{node.node.name} boots its own image, whose console vtopo cannot drive; "
                                  f"`vtopo console` attaches to it")
        return [sys.executable, "-m", "vtopo.serial_console", self.console_socket(node), "--", *argv]

    def standing_servers(self, node: NodeContext[VmSettings]) -> dict[str, int]:
        return dict(GUEST_SERVERS) if node.settings.image == api.BUILTIN_IMAGE else {}

    def routes(self, node: NodeContext[VmSettings]) -> bool:
        return bool(node.settings.forwarding)

    def default_gateways(self, node: NodeContext[VmSettings]) -> list[str] | None:
        settings = node.settings
        return None if settings.forwarding else [g for g in (settings.default_route, settings.default_route6) if g]

    def console_socket(self, node: NodeContext[VmSettings]) -> str:
        return f"{node.names.node_dir(node.node.name)}/console.sock"

    @staticmethod
    def backend(node: NodeContext[VmSettings]) -> str:
        """"libvirt" or "qemu". A VM that boots a disk image runs as a QEMU process: vtopo hands QEMU the image on a
        descriptor it opened and checked itself, where libvirt would open the file by its path (and give it to its
        QEMU user)."""
        return "qemu" if node.settings.image != api.BUILTIN_IMAGE else node.lab.vm_backend

    def qmp_socket(self, node: NodeContext[VmSettings]) -> str:
        return f"{node.names.node_dir(node.node.name)}/qmp.sock"

    def machine(self, node: NodeContext[VmSettings]) -> api.MachineProcess:
        if self.backend(node) == "libvirt":
            name = self.domain_name(node)
            return api.MachineProcess("libvirt", f"{api.LIBVIRT_QEMU_RUN_DIR}/{name}.pid", name,
                                      node.facts.libvirt_uri, node.settings.vhost)
        return api.MachineProcess("qemu", f"{node.names.node_dir(node.node.name)}/qemu.pid", vhost=node.settings.vhost)

    def vhost_on(self, node: NodeContext[VmSettings]) -> bool:
        return node.settings.vhost and node.facts.vhost_net

    def check(self, node: NodeContext[VmSettings]) -> Iterable[Problem]:
        settings, subject, node_id = node.settings, node.subject, node.node.id
        if settings.vhost and not node.facts.vhost_net and node.facts.probed:
            yield Problem("vhost-net is requested but this host's kernel has no vhost-net; the VM runs with "
                          "vhost=off", subject, "", node_id, Severity.WARNING)
        if node.facts.accel != "kvm" and node.facts.probed:
            yield Problem("KVM is not usable here, so this VM runs under TCG emulation (slower)", subject, "",
                          node_id, Severity.WARNING)
        if settings.vhost_user and any(e.other.kind.name == "ovs" for e in node.ends):
            yield Problem("; ".join(self._vhost_user_refusals(node)) + ". Turn vhost_user off to use a tap port.",
                          subject, "", node_id)
        # the built-in guest's init takes no device for a gateway, so none can be link-local
        yield from check_default_routes(node, settings.default_route, settings.default_route6, link_local=False)
        if settings.image != api.BUILTIN_IMAGE and node.lab.topology.vm_backend == "libvirt":
            yield Problem("this VM boots a disk image, so it runs as a QEMU process, not a libvirt domain: vtopo hands "
                          "QEMU the image on a descriptor it opened and checked itself, where libvirt would open the "
                          "file by its path", subject, "", node_id, Severity.WARNING)
        if settings.image != api.BUILTIN_IMAGE:
            for end in node.ends:
                if end.end.interface.subinterfaces:
                    yield Problem(f"{node.node.name}:{end.end.port}: {node.node.name} boots its own disk image, which "
                                  "configures its own interfaces; vtopo makes 802.1Q subinterfaces in the built-in "
                                  "guest only. Set image to builtin, or remove the subinterfaces and make them in the "
                                  "image", subject, "", node_id)
        refusal = api.image_problem(settings.image, node.facts.images_dir, node.lab.trust.images)
        if refusal is not None:
            consent = ConsentRequest("disk image", refusal.consent_path, "the VM boots from this file; QEMU reads it "
                                     "and writes nothing back (its changes go to a temporary snapshot)") \
                if refusal.consent_path else None
            yield Problem(refusal.message, subject, "", node_id, consent=consent)

    @staticmethod
    def _vhost_user_refusals(node: NodeContext[VmSettings]) -> list[str]:
        """Why a vhost-user NIC cannot run, most basic first (README, "Known limits of this host", has the commands and
        errors)."""
        reasons = ["vtopo does not make vhost-user ports yet (dpdkvhostuserclient on OVS, vhost-user NICs in QEMU)"]
        if node.facts.accel != "kvm":
            reasons.append("a vhost-user NIC needs KVM: under TCG emulation QEMU 7.2 crashes (segfault) as soon as "
                           "the guest enables the NIC's rings, although OVS with DPDK 22.11 runs here on 2 MB "
                           "hugepages and its dpdkvhostuserclient ports connect")
        if not node.facts.ovs_dpdk:
            reasons.append("the running Open vSwitch has not initialised DPDK: install openvswitch-switch-dpdk, switch "
                           "ovs-vswitchd to it (update-alternatives --set ovs-vswitchd /usr/lib/openvswitch-switch-"
                           "dpdk/ovs-vswitchd-dpdk), reserve 2 MB hugepages (sysctl vm.nr_hugepages=512) and set "
                           "other_config:dpdk-init=true")
        return reasons

    def resources(self, node: NodeContext[VmSettings]) -> tuple[int, int]:
        return node.settings.memory_mb, node.settings.vcpus

    def host_files(self, node: NodeContext[VmSettings]) -> list[str]:
        if node.settings.image != api.BUILTIN_IMAGE:
            return [api.image_path(node.settings.image, node.facts.images_dir)]
        return [f"{node.facts.guest_dir}/{self._guest_kernel(node)}", f"{node.facts.guest_dir}/initrd.img"]

    @staticmethod
    def _guest_kernel(node: NodeContext[VmSettings]) -> str:
        return "vmlinuz" if node.settings.nic_model == "virtio" else "vmlinuz-generic"  # the cloud kernel has no e1000

    def guest_cmdline(self, node: NodeContext[VmSettings]) -> str:
        parts = ["console=ttyS0", "quiet", "panic=-1", f"vtopo.hostname={node.node.name}"]
        for index, end in enumerate(self._nics(node)):
            interface = end.end.interface
            parts += [f"vtopo.ip=eth{index}:{address}" for address in interface.addresses]
            for sub in interface.subinterfaces:
                name = subinterface_name(f"eth{index}", sub.vlan)
                parts += [f"vtopo.vlan={name}", *(f"vtopo.ip={name}:{address}" for address in sub.addresses)]
        parts += [f"vtopo.gw={gateway}" for gateway in (node.settings.default_route, node.settings.default_route6)
                  if gateway]
        if node.settings.forwarding:
            parts.append("vtopo.forward=1")
        return " ".join(parts)

    def _nics(self, node: NodeContext[VmSettings]) -> list[EndContext]:
        return sorted(node.ends, key=lambda e: self.ports.index_of(e.end.port) or 0)

    def guest_boot(self, node: NodeContext[VmSettings]) -> tuple[str, str]:
        """The built-in guest's kernel and initrd."""
        return f"{node.facts.guest_dir}/{self._guest_kernel(node)}", f"{node.facts.guest_dir}/initrd.img"

    def domain_name(self, node: NodeContext[VmSettings]) -> str:
        return f"{node.names.prefix}-{node.node.name}"

    def domain_xml(self, node: NodeContext[VmSettings], directory: str) -> str:
        """The VM as a libvirt domain. ElementTree, which writes it, loads with the first VM libvirt runs."""
        from vtopo_kinds.vm_domain import DomainNic, DomainSpec, domain_xml

        settings = node.settings
        kernel, initrd = self.guest_boot(node)
        nics = tuple(DomainNic(mac=end.guest_mac(), model=settings.nic_model, vhost=self.vhost_on(node),
                               device=end.device, full_checksums=self._full_checksums(node, end))
                     for end in self._nics(node))
        return domain_xml(DomainSpec(name=self.domain_name(node), lab=node.lab.topology.name,
                                     prefix=node.names.prefix, node_id=node.node.id, accel=node.facts.accel,
                                     vcpus=settings.vcpus, memory_mb=settings.memory_mb,
                                     console_socket=self.console_socket(node), console_log=f"{directory}/console.log",
                                     nics=nics, kernel=kernel, initrd=initrd, cmdline=self.guest_cmdline(node)))

    @staticmethod
    def _full_checksums(node: NodeContext[VmSettings], end: EndContext) -> bool:
        """csum=off on a virtio NIC whose switch leaves checksums partial: the guest then checksums every frame."""
        switch = end.other
        return (node.settings.nic_model == "virtio" and isinstance(switch.kind, ForwardsInUserspace)
                and switch.kind.leaves_checksums_partial(switch.owner))

    def qemu_argv(self, node: NodeContext[VmSettings], directory: str) -> list[str]:
        """QEMU's command line: in the foreground (vtopo starts it as the unprivileged user), with every tap, macvtap,
        vhost-net and disk image on a descriptor vtopo opened (see nic_fds and lower)."""
        settings, facts = node.settings, node.facts
        argv = ["qemu-system-x86_64", "-name", node.node.name, "-machine", f"q35,accel={facts.accel}",
                "-cpu", "host" if facts.accel == "kvm" else "max", "-smp", str(settings.vcpus),
                "-m", str(settings.memory_mb), "-nodefaults", "-display", "none",
                "-chardev", f"socket,id=console,path={directory}/console.sock,server=on,wait=off,"
                            f"logfile={directory}/console.log",
                "-serial", "chardev:console", "-qmp", f"unix:{self.qmp_socket(node)},server=on,wait=off",
                "-pidfile", self.machine(node).pid_file, "-sandbox", SANDBOX]
        if settings.image == api.BUILTIN_IMAGE:
            kernel, initrd = self.guest_boot(node)
            argv += ["-kernel", kernel, "-initrd", initrd, "-append", self.guest_cmdline(node), "-no-reboot"]
        else:  # vtopo opens the file and hands QEMU the descriptor; the format is never probed (see image_fds)
            image_format = "qcow2" if settings.image.endswith(".qcow2") else "raw"
            argv += ["-add-fd", f"fd={IMAGE_FD},set={IMAGE_FDSET}",
                     "-drive", f"file=/dev/fdset/{IMAGE_FDSET},format={image_format},if=virtio,snapshot=on"]
        vhost = self.vhost_on(node)
        for index, end in enumerate(self._nics(node)):
            netdev = f"net{index}"
            vhost_option = f"vhost=on,vhostfd={FIRST_VHOST_FD + index}" if vhost else "vhost=off"
            argv += ["-netdev", f"tap,id={netdev},fd={FIRST_TAP_FD + index},{vhost_option}"]
            device = f"{NIC_DEVICES[settings.nic_model]},netdev={netdev},mac={end.guest_mac()}"
            if self._full_checksums(node, end):
                device += ",csum=off"
            argv += ["-device", device]
        return argv

    def nic_fds(self, node: NodeContext[VmSettings]) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
        """Which descriptor carries each NIC's macvtap or tap: ([(fd, macvtap)], [(fd, tap)])."""
        macvtaps: list[tuple[int, str]] = []
        taps: list[tuple[int, str]] = []
        for index, end in enumerate(self._nics(node)):
            (macvtaps if end.medium == "macvtap" else taps).append((FIRST_TAP_FD + index, end.device))
        return macvtaps, taps

    def lower(self, node: NodeContext[VmSettings]) -> Iterable[api.Op]:
        owner, directory = node.subject, node.names.node_dir(node.node.name)
        if self.backend(node) == "libvirt":
            yield api.MakeDirectory(owner=owner, path=directory)
            # after its NICs are configured, so each carries the lab's tag: cleanup finds them even without a journal
            configured = tuple(api.up_resource(None, end.device) for end in node.ends)
            name, uri = self.domain_name(node), node.facts.libvirt_uri
            yield api.StartDomain(owner=owner, name=name, uri=uri, xml=self.domain_xml(node, directory),
                                  vhost=self.vhost_on(node), after=(f"file:{directory}", *configured))
            every_domain = tuple(f"domain:{self.domain_name(vm)}" for vm in node.lab.nodes.values()
                                 if vm.kind.name == self.name and self.backend(vm) == "libvirt")
            yield api.ResumeDomain(owner=owner, name=name, uri=uri, after=every_domain)
            return
        yield api.MakeDirectory(owner=owner, path=directory, user=node.facts.qemu_user,
                                mode=0o700)  # QEMU's sockets, log
        macvtaps, taps = self.nic_fds(node)
        image = node.settings.image
        image_fds = () if image == api.BUILTIN_IMAGE else ((IMAGE_FD, api.image_path(image, node.facts.images_dir)),)
        vhost_fds = tuple((FIRST_VHOST_FD + index, api.VHOST_DEVICE) for index in range(len(node.ends))) \
            if self.vhost_on(node) else ()
        yield api.StartProcess(owner=owner, name=f"qemu@{node.node.name}", argv=tuple(self.qemu_argv(node, directory)),
                               netns=None, pid_file=self.machine(node).pid_file, ready_path=self.qmp_socket(node),
                               ready_banner=QMP_GREETING, user=node.facts.qemu_user,
                               groups=(KVM_GROUP,) if node.facts.accel == "kvm" else (), tap_fds=tuple(macvtaps),
                               tun_fds=tuple(taps), device_fds=vhost_fds, image_fds=image_fds,
                               after=tuple(api.dev_resource(None, end.device) for end in node.ends))
