"""Links, addresses, routes, sysctls and qdiscs through rtnetlink, one socket per network namespace.

A netlink socket stays bound to the namespace it was opened in, so each namespace's socket is opened
once, inside `entered()`, and reused: no helper process per namespace.
"""
from __future__ import annotations

import array
import asyncio
import errno
import fcntl
import ipaddress
import os
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType

from pyroute2 import IPRoute
from pyroute2.netlink.exceptions import NetlinkError as _Pyroute2Error

from vtopo.host.netns import NetlinkError, NetnsNotFoundError, entered, open_netns
from vtopo.ops import TBF_LATENCY_MS, LinkType, MacvlanMode, tbf_burst, tbf_rate

__all__ = ["LinkInfo", "Netlink", "NetlinkError", "NetnsNotFoundError", "MACVLAN_MODES"]

MACVLAN_MODES = frozenset(mode.value for mode in MacvlanMode)

_USER_HZ = 100  # bridge timers travel in clock_t, i.e. centiseconds
_IFNAMSIZ = 16
_TUNSETIFF = 0x400454CA  # _IOW('T', 202, int), as on x86 and arm
_TUNSETPERSIST = 0x400454CB
_IFF_TAP = 0x0002
_IFF_NO_PI = 0x1000
_IFF_TUN_EXCL = 0x8000
_SIOCETHTOOL = 0x8946
_ETHTOOL_STXCSUM = 0x17
_IFREQ_SIZE = 40
_TC_H_ROOT = 0xFFFFFFFF
_MAX_TC_RATE = 2**32 - 1  # bytes/s in tbf's 32-bit rate, about 34 Gbit/s
_DEVICE_WAIT_S = 2.0


@dataclass(frozen=True)
class LinkInfo:
    """One interface as a dump reports it."""

    name: str
    index: int
    kind: str | None
    alias: str | None
    master_index: int | None


def _where(netns: str | None) -> str:
    return f" in netns {netns}" if netns else ""


@contextmanager
def _kernel(operation: str) -> Iterator[None]:
    """Turn a refusal from the kernel into NetlinkError naming `operation`."""
    try:
        yield
    except NetlinkError:
        raise
    except _Pyroute2Error as e:
        message = os.strerror(e.code)
        detail = e.args[1] if len(e.args) > 1 else None  # the kernel's extended ack, when it gave one
        if detail and detail != message:
            message = f"{message} ({detail})"
        raise NetlinkError(operation, message, e.code) from e
    except OSError as e:
        code = e.errno or errno.EIO
        raise NetlinkError(operation, os.strerror(code), code) from e


class Netlink:
    """rtnetlink in the host and named namespaces, for the thread that made it, outside `entered()`.

    The host namespace (netns None) is the one the creating thread is in. An open socket keeps its
    namespace alive: `release(netns)` before deleting the namespace.
    """

    def __init__(self) -> None:
        self._thread = threading.get_ident()
        self._loop = asyncio.new_event_loop()  # shared, so that a socket costs one file descriptor
        self._host_fd = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        self._sockets: dict[str | None, IPRoute] = {None: self._open_socket()}
        self._indexes: dict[tuple[str | None, str], int] = {}

    def __enter__(self) -> Netlink:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close every socket; the object is unusable afterwards."""
        while self._sockets:
            self._close(self._sockets.popitem()[1])
        if not self._loop.is_closed():
            self._loop.close()
            os.close(self._host_fd)

    def release(self, netns: str) -> None:
        """Close the socket of `netns`, if open, so that deleting the namespace destroys it."""
        self._indexes.clear()  # the namespace's links, and the host ends of its veths, are about to go
        ipr = self._sockets.pop(netns, None)
        if ipr is not None:
            self._close(ipr)

    def _close(self, ipr: IPRoute) -> None:
        ipr.close()
        self._loop.run_until_complete(asyncio.sleep(0))  # lets the transport finish closing

    def _open_socket(self) -> IPRoute:
        return IPRoute(groups=0, ext_ack=True, use_event_loop=self._loop)

    def _ipr(self, netns: str | None) -> IPRoute:
        if threading.get_ident() != self._thread:
            raise RuntimeError("a Netlink object is used only by the thread that created it")
        if self._loop.is_closed():
            raise RuntimeError("Netlink is closed")
        ipr = self._sockets.get(netns)
        if ipr is None:
            with entered(netns):
                ipr = self._sockets[netns] = self._open_socket()
        return ipr

    def _index(self, name: str, netns: str | None) -> int:
        """The ifindex of `name`, looked up once: building a lab configures each link several times."""
        key = (netns, name)
        if key not in self._indexes:
            self._indexes[key] = self._ipr(netns).link("get", ifname=name)[0]["index"]
        return self._indexes[key]

    @contextmanager
    def _placed(self, netns: str | None, via: str | None) -> Iterator[dict[str, int]]:
        """Attributes that put a new link in `netns` when the request goes through `via`'s socket."""
        if netns == via:
            yield {}
        elif netns is None:
            yield {"net_ns_fd": self._host_fd}
        else:
            fd = open_netns(netns)
            try:
                yield {"net_ns_fd": fd}
            finally:
                os.close(fd)

    def add_bridge(self, name: str, netns: str | None, stp: bool, forward_delay_s: float, ageing_s: float) -> None:
        """Create a bridge; timers in seconds (the kernel takes centiseconds)."""
        with _kernel(f"add bridge {name}{_where(netns)}"):
            self._ipr(netns).link(
                "add",
                ifname=name,
                kind=LinkType.BRIDGE.value,
                br_stp_state=int(stp),
                br_forward_delay=round(forward_delay_s * _USER_HZ),
                br_ageing_time=round(ageing_s * _USER_HZ),
            )

    def add_veth(self, name: str, netns: str | None, peer: str, peer_netns: str | None) -> None:
        """Create a veth pair in one request, each end directly in its namespace under its final name."""
        with _kernel(f"add veth {name}{_where(netns)} peer {peer}{_where(peer_netns)}"):
            with self._placed(peer_netns, netns) as placement:
                self._ipr(netns).link("add", ifname=name, kind=LinkType.VETH.value, peer={"ifname": peer, **placement})

    def add_macvlan(self, name: str, netns: str | None, lower: str, lower_netns: str | None, mode: str) -> None:
        """Create a macvlan on `lower`, directly in `netns` under its final name."""
        _check_mode(mode)
        with _kernel(f"add macvlan {name}{_where(netns)} on {lower}{_where(lower_netns)}"):
            with self._placed(netns, lower_netns) as placement:
                link = self._index(lower, lower_netns)
                self._ipr(lower_netns).link(
                    "add", ifname=name, kind=LinkType.MACVLAN.value, link=link, macvlan_mode=mode, **placement
                )

    def add_macvtap(self, name: str, lower: str, lower_netns: str | None, mode: str) -> str:
        """Create a macvtap on `lower`, beside it; return its character device, /dev/tapN (N: ifindex).

        Each namespace numbers its links from 1 but /dev is shared, so the ifindex is chosen free in both.
        """
        _check_mode(mode)
        operation = f"add macvtap {name} on {lower}{_where(lower_netns)}"
        with _kernel(operation):
            link = self._index(lower, lower_netns)
            index = max(info.index for info in self.links(lower_netns)) + 1
            while os.path.exists(f"/dev/tap{index}"):
                index += 1
            self._ipr(lower_netns).link(
                "add", index=index, ifname=name, kind=LinkType.MACVTAP.value, link=link, macvtap_mode=mode
            )
        path = f"/dev/tap{index}"
        deadline = time.monotonic() + _DEVICE_WAIT_S
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                raise NetlinkError(operation, f"{path} did not appear", errno.ETIMEDOUT)
            time.sleep(0.005)
        return path

    def add_tap(self, name: str, netns: str | None) -> None:
        """Create a persistent tap device (`ip tuntap add mode tap`); the kernel says busy if it exists."""
        ifreq = struct.pack("16sH", _ifname(name), _IFF_TAP | _IFF_NO_PI | _IFF_TUN_EXCL).ljust(_IFREQ_SIZE, b"\0")
        with _kernel(f"add tap {name}{_where(netns)}"), entered(netns):
            fd = os.open("/dev/net/tun", os.O_RDWR)  # the device lands in the namespace of this open
            try:
                fcntl.ioctl(fd, _TUNSETIFF, ifreq)
                fcntl.ioctl(fd, _TUNSETPERSIST, 1)
            finally:
                os.close(fd)

    def delete_link(self, name: str, netns: str | None) -> None:
        """Delete a link (a veth takes its peer with it)."""
        self._indexes.clear()  # a veth takes its peer, a lower device its macvlans
        with _kernel(f"delete link {name}{_where(netns)}"):
            self._ipr(netns).link("del", ifname=name)

    def set_master(self, name: str, netns: str | None, master: str | None) -> None:
        """Enslave `name` to `master` (a bridge), or release it with None."""
        with _kernel(f"set master of {name}{_where(netns)} to {master or 'none'}"):
            index = 0 if master is None else self._index(master, netns)
            self._ipr(netns).link("set", ifname=name, master=index)

    def set_hairpin(self, name: str, netns: str | None, enabled: bool) -> None:
        """Hairpin mode of bridge port `name`: frames may leave by the port they came in on."""
        with _kernel(f"set hairpin of {name}{_where(netns)} {'on' if enabled else 'off'}"):
            self._ipr(netns).link("set", ifname=name, kind="bridge_slave", mode=int(enabled))  # IFLA_BRPORT_MODE

    def set_link(
        self,
        name: str,
        netns: str | None,
        *,
        mtu: int | None = None,
        mac: str | None = None,
        up: bool | None = None,
        alias: str | None = None,
    ) -> None:
        """Change the given properties in one request; `alias` is IFLA_IFALIAS ("" clears it)."""
        changes: dict[str, object] = {}
        if mtu is not None:
            changes["mtu"] = mtu
        if mac is not None:
            changes["address"] = mac
        if up is not None:
            changes["state"] = "up" if up else "down"
        if alias is not None:
            changes["ifalias"] = alias
        if not changes:
            return
        settings = ", ".join(f"{key}={value!r}" for key, value in changes.items())
        with _kernel(f"set {settings} of {name}{_where(netns)}"):
            self._ipr(netns).link("set", ifname=name, **changes)

    def add_address(self, name: str, netns: str | None, cidr: str) -> None:
        """Add an IPv4 or IPv6 address given as "address/prefix"."""
        interface = ipaddress.ip_interface(cidr)
        with _kernel(f"add address {cidr} to {name}{_where(netns)}"):
            self._ipr(netns).addr(
                "add",
                index=self._index(name, netns),
                address=str(interface.ip),
                prefixlen=interface.network.prefixlen,
                family=_family(interface.version),
            )

    def add_route(self, netns: str | None, destination: str, gateway: str) -> None:
        """Add a route to `destination` (a network or "default") via `gateway`."""
        via = ipaddress.ip_address(gateway)
        route: dict[str, object] = {"gateway": str(via), "family": _family(via.version), "dst_len": 0}
        if destination != "default":
            network = ipaddress.ip_network(destination)
            if network.version != via.version:
                raise ValueError(f"route to {destination} via {gateway} mixes IPv4 and IPv6")
            route.update(dst=str(network.network_address), dst_len=network.prefixlen)
        with _kernel(f"add route {destination} via {gateway}{_where(netns)}"):
            self._ipr(netns).route("add", **route)

    def set_sysctl(self, netns: str | None, key: str, value: str) -> None:
        """Write a net.* sysctl of `netns`, e.g. "net.ipv4.ip_forward" (slashes if a name has dots)."""
        parts = key.split("/") if "/" in key else key.split(".")
        if parts[0] != "net" or any(part in ("", ".", "..") for part in parts):
            raise ValueError(f"{key!r} is not a net.* sysctl, the only kind a namespace has its own of")
        with _kernel(f"set sysctl {key}={value}{_where(netns)}"), entered(netns):
            # /proc/sys/net shows the namespace of the thread that opens it
            with open("/proc/sys/" + "/".join(parts), "w") as sysctl:
                sysctl.write(value)

    def set_impairment(
        self,
        name: str,
        netns: str | None,
        *,
        delay_ms: float = 0,
        jitter_ms: float = 0,
        loss_pct: float = 0,
        rate_mbit: float = 0,
    ) -> None:
        """Impair what `name` sends: netem for delay, jitter and loss, tbf for the rate; all 0 clears.

        Replaces the root qdisc: netem at the root with tbf as its child, or tbf alone for a rate alone.
        """
        if min(delay_ms, jitter_ms, loss_pct, rate_mbit) < 0 or loss_pct > 100:
            raise ValueError("impairments are non-negative and loss is a percentage")
        rate = tbf_rate(rate_mbit)
        if rate > _MAX_TC_RATE:
            raise ValueError(f"rate {rate_mbit} Mbit/s is above what tbf takes")
        with _kernel(f"set impairment of {name}{_where(netns)}"):
            ipr = self._ipr(netns)
            index = self._index(name, netns)
            try:
                ipr.tc("del", index=index, parent=_TC_H_ROOT)
            except _Pyroute2Error as e:
                if e.code != errno.ENOENT:  # ENOENT: only the default qdisc was there
                    raise
            tbf_parent = _TC_H_ROOT
            if delay_ms or jitter_ms or loss_pct:
                ipr.tc(
                    "add",
                    "netem",
                    index=index,
                    handle="1:",
                    delay=round(delay_ms * 1000),  # microseconds
                    jitter=round(jitter_ms * 1000),
                    loss=loss_pct,
                )
                tbf_parent = 0x10001  # 1:1, netem's only class
            if rate:
                ipr.tc(
                    "add", "tbf", index=index, handle="2:", parent=tbf_parent, rate=rate, burst=tbf_burst(rate_mbit),
                    latency=TBF_LATENCY_MS * 1000,  # microseconds
                )

    def set_tx_checksum(self, name: str, netns: str | None, enabled: bool) -> None:
        """Turn transmit checksum offload on or off, as `ethtool -K NAME tx on|off` does."""
        value = array.array("I", [_ETHTOOL_STXCSUM, int(enabled)])  # struct ethtool_value
        ifreq = struct.pack("16sP", _ifname(name), value.buffer_info()[0]).ljust(_IFREQ_SIZE, b"\0")
        with _kernel(f"set tx checksum of {name}{_where(netns)} {'on' if enabled else 'off'}"), entered(netns):
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:  # resolves NAME in its netns
                fcntl.ioctl(sock.fileno(), _SIOCETHTOOL, ifreq)

    def links(self, netns: str | None) -> list[LinkInfo]:
        """Every link of `netns`."""
        with _kernel(f"list links{_where(netns)}"):
            return [
                LinkInfo(
                    name=msg.get("ifname"),
                    index=msg["index"],
                    kind=msg.get(("linkinfo", "kind")),
                    alias=msg.get("ifalias"),
                    master_index=msg.get("master"),
                )
                for msg in self._ipr(netns).link("dump")
            ]

    def index(self, name: str, netns: str | None) -> int:
        """The ifindex of `name` (a macvtap's character device is /dev/tap<ifindex>)."""
        with _kernel(f"look up {name}{_where(netns)}"):
            return self._index(name, netns)

    def link_exists(self, name: str, netns: str | None) -> bool:
        """Whether `netns` has a link called `name`."""
        with _kernel(f"look up link {name}{_where(netns)}"):
            try:
                self._index(name, netns)
            except _Pyroute2Error as e:
                if e.code == errno.ENODEV:
                    return False
                raise
            return True


def _check_mode(mode: str) -> None:
    if mode not in MACVLAN_MODES:
        raise ValueError(f"macvlan mode {mode!r} is not one of {sorted(MACVLAN_MODES)}")


def _ifname(name: str) -> bytes:
    encoded = name.encode()
    if not 0 < len(encoded) < _IFNAMSIZ:
        raise ValueError(f"interface name {name!r} is not 1 to {_IFNAMSIZ - 1} bytes")
    return encoded


def _family(version: int) -> int:
    return socket.AF_INET if version == 4 else socket.AF_INET6
