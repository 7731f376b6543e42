"""What the administrator lets members of the vtopo group allow for their own labs: the agent's configuration file,
/etc/vtopo/agent.toml. Without it, only root may hand a host device to a lab or let it boot a file from outside
vtopo's images directory: on a shared machine, a student must not put a container on the host's own network.

    # /etc/vtopo/agent.toml
    host_devices = ["vtlab0"]          # host interfaces any member may hang macvlan/macvtap devices on
    image_dirs = ["/srv/vtopo-images"]  # directories whose disk images any member may boot

The agent reads it at every deploy, so a change needs no restart.
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

CONFIG = Path("/etc/vtopo/agent.toml")


class PolicyError(Exception):
    """A configuration file the agent cannot use; the message names the file and the field."""


@dataclass(frozen=True)
class Policy:
    source: Path = CONFIG
    host_devices: frozenset[str] = frozenset()
    image_dirs: frozenset[str] = frozenset()

    @classmethod
    def read(cls, path: Path = CONFIG) -> Policy:
        """The policy in `path`; an empty one when there is no such file."""
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(path)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
            raise PolicyError(f"the agent's configuration {path} cannot be read: {error}") from None
        unknown = sorted(set(data) - {"host_devices", "image_dirs"})
        if unknown:
            raise PolicyError(f"the agent's configuration {path} has unknown settings: {', '.join(unknown)} (it knows "
                              "host_devices and image_dirs)")
        devices, directories = _strings(data, "host_devices", path), _strings(data, "image_dirs", path)
        relative = [directory for directory in directories if not os.path.isabs(directory)]
        if relative:
            raise PolicyError(f"the agent's configuration {path}: image_dirs must be absolute paths, not {relative[0]}")
        return cls(path, frozenset(devices), frozenset(os.path.normpath(directory) for directory in directories))

    def allows_image(self, image: str) -> bool:
        """Whether `image` (an absolute path) lies directly in one of the listed directories."""
        return os.path.dirname(os.path.normpath(image)) in self.image_dirs


def _strings(data: dict[str, object], key: str, path: Path) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise PolicyError(f"the agent's configuration {path}: {key} must be a list of strings")
    return list(value)
