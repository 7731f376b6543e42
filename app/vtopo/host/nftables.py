"""nftables through `nft -j`: rulesets built as JSON data and read back as JSON, never pasted into rule text.

(Debian's python3-nftables binds libnftables with the same JSON, but only for the system Python; vtopo runs in
a venv, and `nft -j -f -` is the same API one process away.)
"""
from __future__ import annotations

import json
import subprocess
from typing import Any

from vtopo.lab_terms import NFT_TABLE_PREFIX
from vtopo.model.sites import VXLAN_PORT
from vtopo.ops.firewall import HOSTS_OWN, NEIGHBOUR_DISCOVERY, ROUTING_ADVICE, address_family, addresses_by_family

FAMILY = "inet"
CHAIN = "forward"
INPUT = "input"
OUTPUT = "output"
VNI_BITS = {"base": "th", "offset": 96, "len": 24}  # after UDP's 8 bytes, the VXLAN header's flags, then its VNI


class NftError(Exception):
    pass


def _nft(commands: list[dict[str, Any]] | None = None, listing: str = "") -> Any:
    argv = ["nft", "-j"] + (["list", listing] if listing else ["-f", "-"])
    done = subprocess.run(argv, input=json.dumps({"nftables": commands}) if commands is not None else None,
                          capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise NftError(f"nft: {done.stderr.strip() or f'exit status {done.returncode}'}")
    return json.loads(done.stdout) if done.stdout.strip() else {}


def _name(key: str) -> dict[str, Any]:
    return {"meta": {"key": key}}


def _drop_unless_both(table: str, inside: str, outside: str, devices: str) -> dict[str, Any]:
    """Drop and count what enters through `inside` (a lab device) and would leave through `outside` (any other)."""
    return {"add": {"rule": {"family": FAMILY, "table": table, "chain": CHAIN, "expr": [
        {"match": {"op": "==", "left": _name(inside), "right": devices}},
        {"match": {"op": "!=", "left": _name(outside), "right": devices}},
        {"counter": None}, {"drop": None}]}}}


def _fib_type(*flags: str) -> dict[str, Any]:
    return {"fib": {"result": "type", "flags": list(flags)}}


def _drop_into_the_host(table: str, devices: str, host_node_devices: tuple[str, ...]) -> dict[str, Any]:
    """Drop and count what enters through a lab device for the host itself (after the lab's own addresses were
    accepted): an address on another interface, one the kernel gave the device itself (its IPv6 link-local address),
    a broadcast or a group the host is in (HOSTS_OWN)."""
    exempt = [{"match": {"op": "!=", "left": _name("iifname"), "right": {"set": list(host_node_devices)}}}] \
        if host_node_devices else []
    return {"add": {"rule": {"family": FAMILY, "table": table, "chain": INPUT, "expr": [
        {"match": {"op": "==", "left": _name("iifname"), "right": devices}}, *exempt,
        {"match": {"op": "==", "left": _fib_type("daddr"), "right": {"set": list(HOSTS_OWN)}}},
        {"counter": None}, {"drop": None}]}}}


def _icmp_types(table: str, devices: str, protocol: str, types: tuple[str, ...], dropped: bool) -> dict[str, Any]:
    """Drop and count (`dropped`), or accept, the ICMP `types` of `protocol` that enter through a lab device (see
    ROUTING_ADVICE and NEIGHBOUR_DISCOVERY)."""
    verdict = [{"counter": None}, {"drop": None}] if dropped else [{"accept": None}]
    return {"add": {"rule": {"family": FAMILY, "table": table, "chain": INPUT, "expr": [
        {"match": {"op": "==", "left": _name("iifname"), "right": devices}},
        {"match": {"op": "==", "left": {"payload": {"protocol": protocol, "field": "type"}},
                   "right": {"set": list(types)}}},
        *verdict]}}}


def _accept_the_labs_own(table: str, devices: str, family: str, addresses: list[str]) -> dict[str, Any]:
    """Accept what enters through a lab device for an address the lab gave the host."""
    return {"add": {"rule": {"family": FAMILY, "table": table, "chain": INPUT, "expr": [
        {"match": {"op": "==", "left": _name("iifname"), "right": devices}},
        {"match": {"op": "==", "left": {"payload": {"protocol": family, "field": "daddr"}},
                   "right": {"set": addresses}}},
        {"accept": None}]}}}


def _pin_tunnel(table: str, vni: int, remote: str) -> dict[str, Any]:
    """Drop and count the VXLAN of the tunnel `vni` that the host would send anywhere but to `remote`."""
    return {"add": {"rule": {"family": FAMILY, "table": table, "chain": OUTPUT, "expr": [
        {"match": {"op": "==", "left": {"payload": {"protocol": "udp", "field": "dport"}}, "right": VXLAN_PORT}},
        {"match": {"op": "==", "left": {"payload": VNI_BITS}, "right": vni}},
        {"match": {"op": "!=", "left": {"payload": {"protocol": address_family(remote), "field": "daddr"}},
                   "right": remote}},
        {"counter": None}, {"drop": None}]}}}


def contain_forwarding(table: str, device_prefix: str, host_node_devices: tuple[str, ...] = (),
                       host_addresses: tuple[str, ...] = (), tunnels: tuple[tuple[int, str], ...] = ()) -> None:
    """Install the lab's table: forwarding between its own devices only, none of the host's addresses reached from
    them but those on the device they come in by, and each tunnel's VXLAN to its remote only (see
    vtopo.ops.ContainForwarding)."""
    devices = f"{device_prefix}*"  # an interface name pattern, as nft's `iifname "vtabc-*"`
    pinned = [{"add": {"chain": {"family": FAMILY, "table": table, "name": OUTPUT, "type": "filter", "hook": "output",
                                 "prio": 0, "policy": "accept"}}},
              *(_pin_tunnel(table, vni, remote) for vni, remote in tunnels)] if tunnels else []
    _nft([
        {"add": {"table": {"family": FAMILY, "name": table}}},
        {"add": {"chain": {"family": FAMILY, "table": table, "name": CHAIN, "type": "filter", "hook": "forward",
                           "prio": 0, "policy": "accept"}}},
        _drop_unless_both(table, "iifname", "oifname", devices),
        _drop_unless_both(table, "oifname", "iifname", devices),
        {"add": {"chain": {"family": FAMILY, "table": table, "name": INPUT, "type": "filter", "hook": "input",
                           "prio": 0, "policy": "accept"}}},
        *(_icmp_types(table, devices, protocol, types, dropped=True) for protocol, types in ROUTING_ADVICE),
        _icmp_types(table, devices, *NEIGHBOUR_DISCOVERY, dropped=False),
        *(_accept_the_labs_own(table, devices, family, addresses)
          for family, addresses in addresses_by_family(host_addresses)),
        _drop_into_the_host(table, devices, host_node_devices),
        *pinned,
    ])


def delete_table(table: str) -> None:
    """Remove the table; already gone is fine."""
    if table in tables():
        _nft([{"delete": {"table": {"family": FAMILY, "name": table}}}])


def tables() -> list[str]:
    """The names of vtopo's tables on this host."""
    listing = _nft(listing="tables").get("nftables", [])
    return [entry["table"]["name"] for entry in listing
            if "table" in entry and entry["table"]["family"] == FAMILY and entry["table"]["name"].startswith(NFT_TABLE_PREFIX)]


def dropped(table: str) -> int:
    """Packets the table's rules have dropped so far."""
    listing = _nft(listing=f"table {FAMILY} {table}").get("nftables", [])
    return sum(expr["counter"]["packets"] for entry in listing if "rule" in entry
               for expr in entry["rule"]["expr"] if "counter" in expr)
