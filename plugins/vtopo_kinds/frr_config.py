"""FRR's integrated configuration (frr.conf) as a router carries it: which daemons a text needs, what it may not do,
and how `show running-config` becomes a text to keep."""
from __future__ import annotations

import re

ZEBRA = "zebra"
STATICD = "staticd"
ALWAYS = (ZEBRA, STATICD)
"""What every router runs, as a real FRR router does: zebra, and staticd for the static routes a student types."""
DAEMONS = ("zebra", "ospfd", "ospf6d", "bgpd", "ripd", "ripngd", "isisd", "staticd", "bfdd")
"""The daemons a router may run, in the order they start (zebra first: the others connect to it)."""

_NEEDS: dict[str, re.Pattern[str]] = {
    "ospfd": re.compile(r"(router ospf|ip ospf)(\s|$)"),
    "ospf6d": re.compile(r"(router ospf6|ipv6 ospf6)(\s|$)"),
    "bgpd": re.compile(r"(router bgp|bgp)(\s|$)"),
    "ripd": re.compile(r"(router rip|ip rip)(\s|$)"),
    "ripngd": re.compile(r"(router ripng|ipv6 ripng)(\s|$)"),
    "isisd": re.compile(r"(router isis|ip router isis|ipv6 router isis|isis)(\s|$)"),
    "bfdd": re.compile(r"bfd$|bfd\s|(neighbor \S+|ip ospf|ipv6 ospf6|isis) bfd(\s|$)"),
}
# Lines that would make a daemon open a file of the config's choosing outside the router's own logs directory, their
# working directory: a log file named with a path (`log file`, `log filtered-file`), and BGP's MRT dumps; FRR takes
# any unambiguous abbreviation of each word (`lo fi /x`). The daemons run inside the node, as the lab's owner, so
# such a file would be the owner's own: these are refused for a lab to stay within its router's directory.
_FILE_COMMANDS = ((("log",), ("file", "filtered-file")), (("dump",), ("bgp",)))
_HEADER = ("Building configuration...", "Current configuration:")


def _statements(text: str) -> list[tuple[int, str]]:
    """(line number, statement) for each line that is not blank or a comment."""
    return [(number, line.strip()) for number, line in enumerate(text.splitlines(), 1)
            if line.strip() and not line.strip().startswith("!")]


def daemons_for(text: str) -> list[str]:
    """The daemons every router runs, and each daemon of DAEMONS a statement of `text` belongs to."""
    needed = set(ALWAYS) | {daemon for _, line in _statements(text) for daemon, pattern in _NEEDS.items()
                        if pattern.match(line)}
    return [daemon for daemon in DAEMONS if daemon in needed]


def _abbreviates(word: str, commands: tuple[str, ...], shortest: int = 1) -> bool:
    return len(word) >= shortest and any(command.startswith(word) for command in commands)


def _writes_file(line: str) -> bool:
    words = line.split()
    for first, second in _FILE_COMMANDS:
        if len(words) >= 2 and _abbreviates(words[0], first, 2) and _abbreviates(words[1], second):
            return first != ("log",) or any("/" in word for word in words[2:])
    return False


def file_writes(text: str) -> list[tuple[int, str]]:
    """The statements that would write a file outside the router's directory, by line number."""
    return [(number, line) for number, line in _statements(text) if _writes_file(line)]


def kept_running_config(shown: str) -> str:
    """`show running-config` as a configuration to keep: without vtysh's header lines and its closing `end`."""
    lines = shown.strip("\n").splitlines()
    while lines and (lines[0].strip() in _HEADER or not lines[0].strip()):
        lines.pop(0)
    if lines and lines[-1].strip() == "end":
        lines.pop()
    return "\n".join(line.rstrip() for line in lines) + "\n"


_NOT_CONFIGURATION = ("frr version ", "frr defaults ", "username ")  # what vtysh adds, and vtysh's own file
_CLOSING = ("exit", "end")


def comparable_config(text: str) -> str:
    """A configuration as two of them are compared: without comments, blank lines, the lines vtysh adds and the
    `exit` that closes each block, and with the statements of each flat block (an interface, `router ospf`) sorted,
    as FRR prints them in an order of its own. Blocks with nested blocks (address families) keep their order."""
    blocks: list[list[str]] = []
    for line in (line.rstrip() for line in kept_running_config(text).splitlines()):
        if not line.strip() or line.lstrip().startswith("!") or line.startswith(_NOT_CONFIGURATION) or \
                line in _CLOSING:
            continue
        if line.startswith(" ") and blocks:
            blocks[-1].append(line)
        else:
            blocks.append([line])
    flat = [[head, *sorted(body)] if all(not line.startswith("  ") for line in body) else [head, *body]
            for head, *body in blocks]
    return "".join(f"{line}\n" for block in flat for line in block)
