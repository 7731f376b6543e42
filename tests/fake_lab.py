"""A deployed l2-vs-l3 as checks see it, without deploying: the answers a probe would give, healthy unless a test
breaks them. Shared by the check engine's tests and the Checks dock's."""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field


@dataclass
class FakeLab:
    """A deployed l2-vs-l3 as the checks would see it, healthy unless a test breaks it."""

    owners: dict[str, str] = field(default_factory=lambda: {
        "10.1.0.10": "h1", "10.1.0.11": "h2", "10.1.0.1": "r1", "10.0.12.1": "r1", "10.0.12.2": "r2",
        "10.2.0.1": "r2", "10.2.0.10": "h3"})
    unreachable: dict[tuple[str, str], str] = field(default_factory=dict)
    routes: dict[str, list[dict[str, str]]] = field(default_factory=lambda: {
        "r1": [{"dst": "10.1.0.0/24", "protocol": "kernel"}, {"dst": "10.2.0.0/24", "protocol": "ospf"}],
        "r2": [{"dst": "10.2.0.0/24", "protocol": "kernel"}, {"dst": "10.1.0.0/24", "protocol": "ospf"}],
        "h1": [{"dst": "default", "protocol": "boot"}], "h3": [{"dst": "default", "protocol": "boot"}]})
    neighbors: dict[str, dict] = field(default_factory=lambda: {
        "r1": {"neighbors": {"10.2.0.1": [{"state": "Full/DROther", "address": "10.0.12.2"}]}},
        "r2": {"neighbors": {"10.1.0.1": [{"state": "Full/DROther", "address": "10.0.12.1"}]}}})
    domains: list[set[str]] = field(default_factory=lambda: [
        {"h1:eth0", "h2:eth0", "r1:eth0"}, {"r1:eth1", "r2:eth1"}, {"r2:eth0", "h3:eth0"}])
    rates: dict[tuple[str, str], float] = field(default_factory=dict)
    causes: dict[tuple[str, str], str] = field(default_factory=dict)
    delay_s: float = 0.0

    def address_of(self, source: str, destination: str) -> str:
        return next(a for a, owner in self.owners.items() if owner == destination)

    def addresses_of(self, node: str) -> list[str]:
        return [a for a, owner in self.owners.items() if owner == node]

    def node_of(self, address: str) -> str | None:
        return self.owners.get(address)

    def reach(self, source: str, destination: str, address: str) -> str | None:
        time.sleep(self.delay_s)
        return self.unreachable.get((source, destination))

    def hops(self, source: str, address: str) -> list[str]:
        if self.owners[address] in ("h3", "r2") and source in ("h1", "h2"):
            return ["10.1.0.1", "10.0.12.2", address] if self.owners[address] == "h3" else ["10.1.0.1", address]
        if source == "h3" and self.owners[address] == "h1":
            return ["10.2.0.1", "10.0.12.1", address]
        return [address]

    def diagnose(self, source: str, destination: str, address: str) -> str:
        return self.causes.get((source, destination), "")

    def run(self, node: str, argv: list[str]) -> str:
        if argv[0] == "vtysh":
            return json.dumps(self.neighbors.get(node, {}))
        return json.dumps(self.routes.get(node, []))

    def same_domain(self, a: str, b: str) -> bool:
        return any({a, b} <= domain for domain in self.domains)

    def apart(self, a: str, b: str) -> str:
        return ""

    def rate(self, source: str, destination: str, seconds: int) -> float:
        return self.rates[(source, destination)]
