"""A VM as a libvirt domain: the domain XML, built with ElementTree from what the compiler knows. Pure.

The serial console is a unix socket that QEMU serves and libvirt sets up (`<serial type='unix'>`), with the
console log beside it, at the same paths as for a VM started as a bare QEMU process: `vtopo console`, `vtopo exec`
and measurements from the VM work the same on both backends.
"""
from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass

from vtopo.kinds.api import DOMAIN_XMLNS

ElementTree.register_namespace("vtopo", DOMAIN_XMLNS)

LIBVIRT_MODELS = {"virtio": "virtio", "e1000": "e1000"}


@dataclass(frozen=True)
class DomainNic:
    """One NIC on the tap or macvtap vtopo made (`device`). `full_checksums`: the guest checksums every frame
    (host csum off), for a switch that forwards partial checksums as they are."""

    mac: str
    model: str
    vhost: bool
    device: str
    full_checksums: bool = False


@dataclass(frozen=True)
class DomainSpec:
    name: str
    lab: str
    prefix: str
    node_id: str
    accel: str
    vcpus: int
    memory_mb: int
    console_socket: str
    console_log: str
    nics: tuple[DomainNic, ...]
    kernel: str
    initrd: str
    cmdline: str


def _sub(parent: ElementTree.Element, tag: str, text: str = "", **attributes: str) -> ElementTree.Element:
    element = ElementTree.SubElement(parent, tag, attributes)
    if text:
        element.text = text
    return element


def domain_xml(spec: DomainSpec) -> str:
    domain = ElementTree.Element("domain", type="kvm" if spec.accel == "kvm" else "qemu")
    _sub(domain, "name", spec.name)
    metadata = _sub(domain, "metadata")
    _sub(metadata, f"{{{DOMAIN_XMLNS}}}node", lab=spec.lab, prefix=spec.prefix, node=spec.node_id)
    _sub(domain, "memory", str(spec.memory_mb), unit="MiB")
    _sub(domain, "vcpu", str(spec.vcpus))
    os_element = _sub(domain, "os")
    _sub(os_element, "type", "hvm", arch="x86_64", machine="q35")
    _sub(os_element, "kernel", spec.kernel)  # the built-in guest: a libvirt domain never boots a disk image
    _sub(os_element, "initrd", spec.initrd)
    _sub(os_element, "cmdline", spec.cmdline)
    if spec.accel == "kvm":
        _sub(domain, "cpu", mode="host-passthrough")
    else:
        _sub(domain, "cpu", mode="maximum")
    for event in ("on_poweroff", "on_reboot", "on_crash"):
        _sub(domain, event, "destroy")  # as QEMU's -no-reboot: a guest that stops is gone
    devices = _sub(domain, "devices")
    serial = _sub(devices, "serial", type="unix")
    _sub(serial, "source", mode="bind", path=spec.console_socket)
    _sub(serial, "log", file=spec.console_log)
    _sub(serial, "target", port="0")
    for nic in spec.nics:
        devices.append(_interface(nic))
    _sub(devices, "controller", type="usb", model="none")
    _sub(devices, "memballoon", model="none")
    ElementTree.indent(domain)
    return ElementTree.tostring(domain, encoding="unicode") + "\n"


def _interface(nic: DomainNic) -> ElementTree.Element:
    interface = ElementTree.Element("interface", type="ethernet")
    _sub(interface, "mac", address=nic.mac)
    _sub(interface, "target", dev=nic.device, managed="no")  # libvirt opens it (/dev/tapN for a macvtap), no more
    _sub(interface, "model", type=LIBVIRT_MODELS[nic.model])
    if nic.model == "virtio":  # vhost-net serves virtio NICs only
        driver = _sub(interface, "driver", name="vhost" if nic.vhost else "qemu")
        if nic.full_checksums:
            _sub(driver, "host", csum="off")
    return interface
