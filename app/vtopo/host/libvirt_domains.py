"""Lab VMs as libvirt domains, through libvirt-python: start, destroy, find by their vtopo metadata, inspect.

Domains are transient (createXML): `destroy` is the whole undo, nothing stays defined in /etc/libvirt, and a
domain left by a crashed vtopo is found again by the vtopo element in its <metadata>.
"""
from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtopo.ops import DOMAIN_XMLNS, LIBVIRT_QEMU_RUN_DIR
from vtopo.host.libvirtd import DEFAULT_URI, load_libvirt

LIBVIRT_QEMU_LOG_DIR = Path("/var/log/libvirt/qemu")  # where qemu:///system keeps each domain's <name>.log


class DomainError(Exception):
    pass


@dataclass(frozen=True)
class LabDomain:
    name: str
    lab: str
    prefix: str
    node_id: str


@contextmanager
def _connection(uri: str) -> Iterator[Any]:
    """A libvirt connection for one call; libvirt's errors come out as DomainError."""
    libvirt = load_libvirt()
    try:
        connection = libvirt.open(uri)
    except libvirt.libvirtError as error:
        raise DomainError(f"cannot connect to libvirt at {uri}: {error.get_error_message()}; is libvirtd "
                          "running?") from error
    try:
        yield connection
    except libvirt.libvirtError as error:
        raise DomainError(error.get_error_message()) from error
    finally:
        connection.close()


def _lookup(connection: Any, name: str) -> Any:
    """The domain, or None when there is none of that name."""
    libvirt = load_libvirt()
    try:
        return connection.lookupByName(name)
    except libvirt.libvirtError as error:
        if error.get_error_code() == libvirt.VIR_ERR_NO_DOMAIN:
            return None
        raise


def start(uri: str, xml: str) -> str:
    """Create the transient domain, paused (QEMU set up, the guest not yet running); returns its live XML."""
    libvirt = load_libvirt()
    with _connection(uri) as connection:
        return str(connection.createXML(xml, libvirt.VIR_DOMAIN_START_PAUSED).XMLDesc(0))


def resume(uri: str, name: str) -> None:
    with _connection(uri) as connection:
        domain = _lookup(connection, name)
        if domain is None:
            raise DomainError(f"no libvirt domain is named {name}")
        domain.resume()


def destroy(uri: str, name: str) -> None:
    """Stop the domain at once (a transient one is then gone), and remove the log libvirt kept of it on this host.
    A domain that is already gone is fine."""
    with _connection(uri) as connection:
        domain = _lookup(connection, name)
        if domain is not None:
            domain.destroy()
    if uri == DEFAULT_URI:
        (LIBVIRT_QEMU_LOG_DIR / f"{name}.log").unlink(missing_ok=True)


def running(uri: str, name: str) -> bool:
    try:
        with _connection(uri) as connection:
            domain = _lookup(connection, name)
            return domain is not None and bool(domain.isActive())
    except DomainError:
        return False


def live_xml(uri: str, name: str) -> str:
    with _connection(uri) as connection:
        domain = _lookup(connection, name)
        if domain is None:
            raise DomainError(f"no libvirt domain is named {name}")
        return str(domain.XMLDesc(0))


def lab_domains(uri: str) -> list[LabDomain]:
    """Every domain that carries vtopo's metadata, running or not."""
    libvirt = load_libvirt()
    found = []
    with _connection(uri) as connection:
        for domain in connection.listAllDomains(0):
            try:
                element = ElementTree.fromstring(domain.metadata(libvirt.VIR_DOMAIN_METADATA_ELEMENT, DOMAIN_XMLNS))
            except libvirt.libvirtError:
                continue  # not one of ours
            found.append(LabDomain(domain.name(), element.get("lab", ""), element.get("prefix", ""),
                                   element.get("node", "")))
    return found


def interface_drivers(xml: str) -> list[str]:
    """The <driver name> of each interface in a domain XML ("" where libvirt chooses)."""
    drivers = []
    for interface in ElementTree.fromstring(xml).iterfind("devices/interface"):
        driver = interface.find("driver")
        drivers.append(driver.get("name", "") if driver is not None else "")
    return drivers


def qemu_pid(name: str) -> int | None:
    try:
        return int(Path(LIBVIRT_QEMU_RUN_DIR, f"{name}.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
