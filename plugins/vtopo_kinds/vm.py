"""A QEMU virtual machine. NICs are backed by a tap (on a bridge, OVS or the host), a macvtap (the tap-vs-macvtap
experiment) or vhost-user to an OVS-DPDK port (the OVS vhost-user experiment). vhost-net can be turned on or off per
VM (the vhost-net experiment).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Iterable

from vtopo.kinds.api import (BUILTIN_IMAGE, ECHO_SERVER, IPERF3_SERVER, CannotRunInside, ConsentRequest, EndContext,
                             MakeDirectory, NodeContext, NodeKind, Op, PortSpec, Problem, Role, Severity, StartProcess,
                             dev_resource, image_path, image_problem, setting)
from vtopo_kinds.common import check_gateway

FIRST_TAP_FD = 3
IMAGE_FD = 20  # past any macvtap's descriptor (at most 8 NICs from FIRST_TAP_FD)
IMAGE_FDSET = 1
SANDBOX = "on,obsolete=deny,resourcecontrol=deny"
"""QEMU's seccomp filter: no obsolete system calls, no CPU affinity or scheduler changes. QEMU 7.2 installs the
filter before it daemonizes and drops to the -runas user, so spawn=deny kills it with SIGSYS at -daemonize and
elevateprivileges=deny makes -runas fail; with -runas, a guest that breaks out of QEMU still holds only an
unprivileged user's process."""
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
    forwarding: bool = setting(False, "IP forwarding", "The guest routes between its NICs: a Linux router "
                               "gateway, as in the host-networking experiment (built-in guest)")


class VmKind(NodeKind[VmSettings]):
    name = "vm"
    label = "Virtual machine"
    description = "A QEMU/KVM virtual machine with virtio or e1000 NICs on taps, macvtaps or vhost-user."
    role = Role.MACHINE
    ports = PortSpec("nic", 0, limit=8)
    connects_to = frozenset({"bridge", "ovs", "macvtap", "host"})
    connect_hint = "A VM's NICs join bridges, OVS switches, macvtap segments or the host; put a bridge between a VM " \
                   "and a container or router."
    settings_type = VmSettings
    needs_acceleration = True

    def command_in(self, node: NodeContext[VmSettings], argv: list[str]) -> list[str]:
        """Typed into the built-in guest's root shell on the serial console (see vtopo.host.console_exec)."""
        if node.settings.image != BUILTIN_IMAGE:
            raise CannotRunInside(f"{node.node.name} boots its own image, whose console vtopo cannot drive; "
                                  f"`vtopo console` attaches to it")
        return [sys.executable, "-m", "vtopo.host.console_exec", self.console_socket(node), "--", *argv]

    def standing_servers(self, node: NodeContext[VmSettings]) -> dict[str, int]:
        return dict(GUEST_SERVERS) if node.settings.image == BUILTIN_IMAGE else {}

    def routes(self, node: NodeContext[VmSettings]) -> bool:
        return bool(node.settings.forwarding)

    def default_gateway(self, node: NodeContext[VmSettings]) -> str | None:
        return None if node.settings.forwarding else str(node.settings.default_route)

    def console_socket(self, node: NodeContext[VmSettings]) -> str:
        return f"{node.names.node_dir(node.node.name)}/console.sock"

    def vhost_on(self, node: NodeContext[VmSettings]) -> bool:
        return node.settings.vhost and node.facts.vhost_net

    def check(self, node: NodeContext[VmSettings]) -> Iterable[Problem]:
        settings, subject, node_id = node.settings, node.subject, node.node.id
        if settings.vhost and not node.facts.vhost_net:
            yield Problem("vhost-net is requested but this host's kernel has no vhost-net; the VM runs with "
                          "vhost=off", subject, "", node_id, Severity.WARNING)
        if node.facts.accel != "kvm":
            yield Problem("KVM is not usable here, so this VM runs under TCG emulation (slower)", subject, "",
                          node_id, Severity.WARNING)
        if settings.vhost_user and not node.facts.ovs_dpdk and any(e.other.kind.name == "ovs" for e in node.ends):
            yield Problem("vhost-user needs Open vSwitch built with DPDK (openvswitch-switch-dpdk) and hugepages; "
                          "this host's OVS has no DPDK. Turn vhost_user off to use a tap port.", subject, "", node_id)
        yield from check_gateway(node, settings.default_route, "default_route")
        refusal = image_problem(settings.image, node.facts.images_dir, node.lab.trust.images)
        if refusal is not None:
            consent = ConsentRequest("disk image", refusal.consent_path, "the VM boots from this file; QEMU reads it "
                                     "and writes nothing back (its changes go to a temporary snapshot)") \
                if refusal.consent_path else None
            yield Problem(refusal.message, subject, "", node_id, consent=consent)

    def resources(self, node: NodeContext[VmSettings]) -> tuple[int, int]:
        return node.settings.memory_mb, node.settings.vcpus

    def host_files(self, node: NodeContext[VmSettings]) -> list[str]:
        if node.settings.image != BUILTIN_IMAGE:
            return [image_path(node.settings.image, node.facts.images_dir)]
        return [f"{node.facts.guest_dir}/{self._guest_kernel(node)}", f"{node.facts.guest_dir}/initrd.img"]

    @staticmethod
    def _guest_kernel(node: NodeContext[VmSettings]) -> str:
        return "vmlinuz" if node.settings.nic_model == "virtio" else "vmlinuz-generic"  # the cloud kernel has no e1000

    def guest_cmdline(self, node: NodeContext[VmSettings]) -> str:
        parts = ["console=ttyS0", "quiet", "panic=-1", f"vtopo.hostname={node.node.name}"]
        for index, end in enumerate(self._nics(node)):
            for address in end.end.interface.addresses:
                parts.append(f"vtopo.ip=eth{index}:{address}")
        if node.settings.default_route:
            parts.append(f"vtopo.gw={node.settings.default_route}")
        if node.settings.forwarding:
            parts.append("vtopo.forward=1")
        return " ".join(parts)

    def _nics(self, node: NodeContext[VmSettings]) -> list[EndContext]:
        return sorted(node.ends, key=lambda e: self.ports.index_of(e.end.port) or 0)

    def qemu_argv(self, node: NodeContext[VmSettings], directory: str) -> tuple[list[str], list[tuple[int, str]]]:
        settings, facts = node.settings, node.facts
        argv = ["qemu-system-x86_64", "-name", node.node.name, "-machine", f"q35,accel={facts.accel}",
                "-cpu", "host" if facts.accel == "kvm" else "max", "-smp", str(settings.vcpus),
                "-m", str(settings.memory_mb), "-nodefaults", "-display", "none",
                "-chardev", f"socket,id=console,path={directory}/console.sock,server=on,wait=off,"
                            f"logfile={directory}/console.log",
                "-serial", "chardev:console", "-daemonize", "-pidfile", f"{directory}/qemu.pid",
                "-sandbox", SANDBOX, "-runas", facts.qemu_user]
        if settings.image == BUILTIN_IMAGE:
            kernel = self._guest_kernel(node)
            argv += ["-kernel", f"{facts.guest_dir}/{kernel}", "-initrd", f"{facts.guest_dir}/initrd.img",
                     "-append", self.guest_cmdline(node), "-no-reboot"]
        else:  # vtopo opens the file and hands QEMU the descriptor; the format is never probed (see image_fds)
            image_format = "qcow2" if settings.image.endswith(".qcow2") else "raw"
            argv += ["-add-fd", f"fd={IMAGE_FD},set={IMAGE_FDSET}",
                     "-drive", f"file=/dev/fdset/{IMAGE_FDSET},format={image_format},if=virtio,snapshot=on"]
        tap_fds: list[tuple[int, str]] = []
        vhost = "on" if self.vhost_on(node) else "off"
        for index, end in enumerate(self._nics(node)):
            netdev = f"net{index}"
            if end.medium == "macvtap":
                fd = FIRST_TAP_FD + len(tap_fds)
                tap_fds.append((fd, end.device))
                argv += ["-netdev", f"tap,id={netdev},fd={fd},vhost={vhost}"]
            else:
                argv += ["-netdev", f"tap,id={netdev},ifname={end.device},script=no,downscript=no,vhost={vhost}"]
            device = f"{NIC_DEVICES[settings.nic_model]},netdev={netdev},mac={end.guest_mac()}"
            if settings.nic_model == "virtio" and end.other.kind.leaves_checksums_partial(end.other.owner):
                device += ",csum=off"  # the guest then sends every frame fully checksummed
            argv += ["-device", device]
        return argv, tap_fds

    def lower(self, node: NodeContext[VmSettings]) -> Iterable[Op]:
        owner, directory = node.subject, node.names.node_dir(node.node.name)
        argv, tap_fds = self.qemu_argv(node, directory)
        yield MakeDirectory(owner=owner, path=directory)
        image = node.settings.image
        image_fds = () if image == BUILTIN_IMAGE else ((IMAGE_FD, image_path(image, node.facts.images_dir)),)
        yield StartProcess(owner=owner, name=f"qemu@{node.node.name}", argv=tuple(argv), netns=None,
                           pid_file=f"{directory}/qemu.pid", tap_fds=tuple(tap_fds), image_fds=image_fds,
                           after=tuple(dev_resource(None, end.device) for end in node.ends))
