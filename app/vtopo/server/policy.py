"""The agent's configuration, /etc/vtopo/agent.toml: what the administrator lets members of the vtopo group allow for
their own labs, and how much of the agent and of the host one member may take. Without the file, only root may hand
a host device to a lab or let it boot a file from outside vtopo's images directory (on a shared machine, a student
must not put a container on the host's own network), and the limits below hold.

    # /etc/vtopo/agent.toml
    host_devices = ["vtlab0"]          # host interfaces any member may hang macvlan/macvtap devices on
    image_dirs = ["/srv/vtopo-images"]  # directories whose disk images any member may boot
    request_seconds = 10               # a client sends its whole request within this time, or is dropped
    request_bytes = 8388608            # the longest request (a lab document of 4 MiB, its escapes doubling it)
    connections_per_user = 32          # open connections of one member at once (root has no limit)
    rate_streams_per_member = 8        # link-rate streams of one member at once (a designer follows one per lab)
    labs_per_member = 10               # labs one member may have deployed at once
    nodes_per_member = 500             # nodes of all of one member's labs together
    vm_memory_mb_per_member = 8192     # memory of all of one member's VMs and image nodes; half the host's by default
    cpu_percent_per_member = 3200      # CPU caps of one member's VMs and image nodes, % of one CPU; 1600 a host CPU
    image_mb_per_member = 4096         # a member's own OCI images on disk (`vtopo image load`), and each archive
    tunnel_vnis = [1000000, 1999999]   # the VXLAN VNIs the tunnels of labs spread over sites may take (docs/sites.md)
    tunnel_peers = ["198.18.0.3"]      # underlay addresses members' labs may tunnel to (root's may tunnel anywhere)
    root_labs_as_host = false          # true: root's labs run as the host's root (their routers as frr), not vtopo-lab

The agent reads it for each connection, so a change needs no restart.
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

from vtopo.model.sites import DEFAULT_VNIS, VNI_LIMITS, is_address

CONFIG = Path("/etc/vtopo/agent.toml")
LISTS = ("host_devices", "image_dirs", "tunnel_peers", "tunnel_vnis")
SWITCHES = ("root_labs_as_host",)


def half_the_memory() -> int:
    """Half of this host's memory, in MiB: what one member's VMs may take together unless configured."""
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20 // 2


class PolicyError(Exception):
    """A configuration file the agent cannot use; the message names the file and the field."""


class TunnelRefused(Exception):
    """A tunnel of a lab spread over sites that the caller may not make; the message says why and who may allow it."""


@dataclass(frozen=True)
class Policy:
    source: Path = CONFIG
    host_devices: frozenset[str] = frozenset()
    image_dirs: frozenset[str] = frozenset()
    request_seconds: int = 10
    request_bytes: int = 8 * 1024 * 1024
    connections_per_user: int = 32  # a check runs 16 commands at once, beside a designer's terminals and polls
    rate_streams_per_member: int = 8  # the agent reads a lab's counters for each: 30 streams of 75 namespaces took a CPU
    labs_per_member: int = 10
    nodes_per_member: int = 500
    vm_memory_mb_per_member: int = field(default_factory=half_the_memory)
    cpu_percent_per_member: int = field(default_factory=lambda: 1600 * (os.cpu_count() or 1))  # CPU caps overcommit
    image_mb_per_member: int = 4096
    tunnel_vnis: tuple[int, int] = DEFAULT_VNIS
    tunnel_peers: frozenset[str] = frozenset()
    root_labs_as_host: bool = False

    @classmethod
    def read(cls, path: Path = CONFIG) -> Policy:
        """The policy in `path`; the defaults when there is no such file."""
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(path)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise PolicyError(f"the agent's configuration {path} cannot be read: {error}") from None
        names = [setting.name for setting in fields(cls) if setting.name != "source"]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise PolicyError(f"the agent's configuration {path} has unknown settings: {', '.join(unknown)} (it knows "
                              f"{', '.join(names)})")
        devices, directories = _strings(data, "host_devices", path), _strings(data, "image_dirs", path)
        relative = [directory for directory in directories if not os.path.isabs(directory)]
        if relative:
            raise PolicyError(f"the agent's configuration {path}: image_dirs must be absolute paths, not {relative[0]}")
        limits = {name: _positive(data, name, path) for name in names if name not in LISTS + SWITCHES and name in data}
        peers = _strings(data, "tunnel_peers", path)
        if not all(is_address(peer) for peer in peers):
            raise PolicyError(f"the agent's configuration {path}: tunnel_peers must be IP addresses")
        return cls(path, frozenset(devices), frozenset(os.path.normpath(directory) for directory in directories),
                   tunnel_vnis=_vni_range(data, path), tunnel_peers=frozenset(peers),
                   root_labs_as_host=_switch(data, "root_labs_as_host", path), **limits)

    def vnis_within(self, asked: list[int]) -> tuple[int, int]:
        """The VNI range a deploy asks its tunnels to take ([] for this agent's own), if it lies within tunnel_vnis."""
        first, last = self.tunnel_vnis
        if not asked:
            return first, last
        if len(asked) != 2 or not first <= asked[0] <= asked[1] <= last:
            raise TunnelRefused(f"the lab's tunnels would take VNIs {'-'.join(map(str, asked))}, outside this host's "
                                f"tunnel_vnis, {first}-{last} (in {self.source}); give every site the same range")
        return asked[0], asked[1]

    def allows_image(self, image: str) -> bool:
        """Whether `image` (an absolute path) lies directly in one of the listed directories."""
        return os.path.dirname(os.path.normpath(image)) in self.image_dirs


def _strings(data: dict[str, object], key: str, path: Path) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise PolicyError(f"the agent's configuration {path}: {key} must be a list of strings")
    return list(value)


def _vni_range(data: dict[str, object], path: Path) -> tuple[int, int]:
    value = data.get("tunnel_vnis", list(DEFAULT_VNIS))
    low, high = VNI_LIMITS
    if not (isinstance(value, list) and len(value) == 2 and all(type(v) is int for v in value)
            and low <= value[0] <= value[1] <= high):
        raise PolicyError(f"the agent's configuration {path}: tunnel_vnis must be [first, last], two VNIs from {low} "
                          f"to {high}, the first no greater than the last")
    return value[0], value[1]


def _switch(data: dict[str, object], key: str, path: Path) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise PolicyError(f"the agent's configuration {path}: {key} must be true or false")
    return value


def _positive(data: dict[str, object], key: str, path: Path) -> int:
    value = data[key]
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise PolicyError(f"the agent's configuration {path}: {key} must be a whole number of at least 1")
    return value
