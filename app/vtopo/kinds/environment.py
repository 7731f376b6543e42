"""What a lab is compiled against: the host's facts, and the names its objects get on the host."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from vtopo.model.rules import lab_tag

MAX_INTERFACE_NAME = 15  # IFNAMSIZ - 1


@dataclass(frozen=True)
class HostFacts:
    """What the host offers. Gathered by the host layer before compiling, so the compiler stays pure."""

    ovs_datapath: str = "netdev"  # what an OVS datapath of "auto" becomes
    vhost_net: bool = False
    ovs_dpdk: bool = False
    netem: bool = False  # the kernel has sch_netem (delay, jitter, loss); tbf (rate) is always assumed
    accel: str = "tcg"
    guest_dir: str = "/var/cache/vtopo/guest"
    frr_dir: str = "/usr/lib/frr"
    routing_suite: str = "frr"  # "frr", or "quagga" where only Quagga is installed (older configuration syntax)
    frr_user: str = "frr"  # the user the routing daemons drop to
    run_root: str = "/run/vtopo"


PREFIX_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
DEFAULT_PREFIX_LENGTH = 5
"""The longest device vtopo names is a host end, ``<prefix>-<node>-<port>`` (``v2k9q-host-eth0``): five characters
of prefix leave ten to the node and its port, as the shipped labs need. Within that, the prefix holds as much of the
lab name's hash as it can: "v" and four base-36 digits, 1,679,616 values (three hex digits had 4,096)."""


def default_prefix(lab_name: str) -> str:
    value = int(hashlib.sha1(lab_name.encode()).hexdigest(), 16)
    digits = ""
    for _ in range(DEFAULT_PREFIX_LENGTH - 1):
        value, digit = divmod(value, len(PREFIX_ALPHABET))
        digits += PREFIX_ALPHABET[digit]
    return "v" + digits


@dataclass(frozen=True)
class LabNames:
    """Every name a lab puts on the host starts with its prefix, so destroy and cleanup find only its own."""

    prefix: str
    run_root: str = "/run/vtopo"

    @property
    def tag(self) -> str:
        return lab_tag(self.prefix)

    @property
    def run_dir(self) -> str:
        return f"{self.run_root}/{self.prefix}"

    def node_dir(self, node_name: str) -> str:
        return f"{self.run_dir}/{node_name}"

    def netns(self, node_name: str) -> str:
        return f"{self.prefix}-{node_name}"

    def node_device(self, node_name: str) -> str:
        return f"{self.prefix}-{node_name}"

    def host_device(self, node_name: str, suffix: str) -> str:
        return f"{self.prefix}-{node_name}-{suffix}"
