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
    labs_per_member = 10               # labs one member may have deployed at once
    nodes_per_member = 500             # nodes of all of one member's labs together
    vm_memory_mb_per_member = 8192     # memory of all of one member's VMs together; half the host's by default

The agent reads it for each connection, so a change needs no restart.
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

CONFIG = Path("/etc/vtopo/agent.toml")
LISTS = ("host_devices", "image_dirs")


def half_the_memory() -> int:
    """Half of this host's memory, in MiB: what one member's VMs may take together unless configured."""
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20 // 2


class PolicyError(Exception):
    """A configuration file the agent cannot use; the message names the file and the field."""


@dataclass(frozen=True)
class Policy:
    source: Path = CONFIG
    host_devices: frozenset[str] = frozenset()
    image_dirs: frozenset[str] = frozenset()
    request_seconds: int = 10
    request_bytes: int = 8 * 1024 * 1024
    connections_per_user: int = 32  # a check runs 16 commands at once, beside a designer's terminals and polls
    labs_per_member: int = 10
    nodes_per_member: int = 500
    vm_memory_mb_per_member: int = field(default_factory=half_the_memory)

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
        limits = {name: _positive(data, name, path) for name in names if name not in LISTS and name in data}
        return cls(path, frozenset(devices), frozenset(os.path.normpath(directory) for directory in directories),
                   **limits)

    def allows_image(self, image: str) -> bool:
        """Whether `image` (an absolute path) lies directly in one of the listed directories."""
        return os.path.dirname(os.path.normpath(image)) in self.image_dirs


def _strings(data: dict[str, object], key: str, path: Path) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise PolicyError(f"the agent's configuration {path}: {key} must be a list of strings")
    return list(value)


def _positive(data: dict[str, object], key: str, path: Path) -> int:
    value = data[key]
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise PolicyError(f"the agent's configuration {path}: {key} must be a whole number of at least 1")
    return value
