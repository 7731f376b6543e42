"""Ops on the lab's own nftables table, which keeps what the host forwards for the lab inside the lab."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from vtopo.ops.base import Op, sh


@dataclass(frozen=True, kw_only=True)
class ContainForwarding(Op):
    """An nftables table of the lab's own: what the host forwards from the lab's devices (named `device_prefix`*)
    goes only to devices of the same lab, and nothing is forwarded into them from elsewhere; the rest is dropped and
    counted. Installed before the lab turns forwarding on anywhere in the host."""

    table: str
    device_prefix: str
    summary_text: ClassVar[str] = "contain forwarding to the lab's own devices (nftables table {table})"

    def provides(self) -> frozenset[str]:
        return frozenset({f"nftables:{self.table}"})

    def explain(self) -> list[str]:
        devices = f"{self.device_prefix}*"
        chain = ("inet", self.table, "forward")
        return [sh("nft", "add", "table", "inet", self.table),
                sh("nft", "add", "chain", *chain, "{ type filter hook forward priority 0; policy accept; }"),
                sh("nft", "add", "rule", *chain, "iifname", devices, "oifname", "!=", devices, "counter", "drop"),
                sh("nft", "add", "rule", *chain, "oifname", devices, "iifname", "!=", devices, "counter", "drop")]

    def inverse(self) -> Op:
        return RemoveNftTable(owner=self.owner, table=self.table)


@dataclass(frozen=True, kw_only=True)
class RemoveNftTable(Op):
    table: str
    summary_text: ClassVar[str] = "delete nftables table {table}"

    def explain(self) -> list[str]:
        return [sh("nft", "delete", "table", "inet", self.table)]
