"""Ops on the lab's own nftables table, which keeps what the host forwards for the lab inside the lab."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from vtopo.ops.base import Op, sh


@dataclass(frozen=True, kw_only=True)
class ContainForwarding(Op):
    """An nftables table of the lab's own: what the host forwards from the lab's devices (named `device_prefix`*)
    goes only to devices of the same lab, and nothing is forwarded into them from elsewhere; the rest is dropped and
    counted. What the lab's devices send to the host's own addresses is dropped too, unless the address is one the lab
    gives the host (`host_addresses`: a host node's, a numbered bridge's), or on the device it came in by, or it came
    in by one of `host_node_devices` (the lab links the host itself there). Installed before the lab builds anything
    in the host's namespace."""

    table: str
    device_prefix: str
    host_node_devices: tuple[str, ...] = ()
    host_addresses: tuple[str, ...] = ()
    summary_text: ClassVar[str] = "contain the lab's traffic to its own devices (nftables table {table})"

    def provides(self) -> frozenset[str]:
        return frozenset({f"nftables:{self.table}"})

    def explain(self) -> list[str]:
        devices = f"{self.device_prefix}*"
        chain, into_host = ("inet", self.table, "forward"), ("inet", self.table, "input")
        exempt = ["iifname", "!=", "{ " + ", ".join(self.host_node_devices) + " }"] if self.host_node_devices else []
        return [sh("nft", "add", "table", "inet", self.table),
                sh("nft", "add", "chain", *chain, "{ type filter hook forward priority 0; policy accept; }"),
                sh("nft", "add", "rule", *chain, "iifname", devices, "oifname", "!=", devices, "counter", "drop"),
                sh("nft", "add", "rule", *chain, "oifname", devices, "iifname", "!=", devices, "counter", "drop"),
                "# what the lab sends to an address of the host's on another interface than it came in by",
                sh("nft", "add", "chain", *into_host, "{ type filter hook input priority 0; policy accept; }"),
                *(sh("nft", "add", "rule", *into_host, "iifname", devices, family, "daddr",
                     "{ " + ", ".join(addresses) + " }", "accept")
                  for family, addresses in addresses_by_family(self.host_addresses)),
                sh("nft", "add", "rule", *into_host, "iifname", devices, *exempt, "fib", "daddr", ".", "iif", "type",
                   "!=", "local", "fib", "daddr", "type", "local", "counter", "drop")]

    def inverse(self) -> Op:
        return RemoveNftTable(owner=self.owner, table=self.table)


def addresses_by_family(addresses: tuple[str, ...]) -> list[tuple[str, list[str]]]:
    """The addresses as nft's `ip` and `ip6` match them, leaving out a family with none."""
    by_family = {"ip": [a for a in addresses if ":" not in a], "ip6": [a for a in addresses if ":" in a]}
    return [(family, found) for family, found in by_family.items() if found]


@dataclass(frozen=True, kw_only=True)
class RemoveNftTable(Op):
    table: str
    summary_text: ClassVar[str] = "delete nftables table {table}"

    def explain(self) -> list[str]:
        return [sh("nft", "delete", "table", "inet", self.table)]
