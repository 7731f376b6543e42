"""FRR's integrated configuration (frr.conf) as a router carries it: the daemons a router may run, what a text may not
do, and how `show running-config` becomes a text to keep."""
from __future__ import annotations

ZEBRA = "zebra"
STATICD = "staticd"
OSPFD = "ospfd"
ALWAYS = (ZEBRA, STATICD)
"""What every router runs, as a real FRR router does: zebra, and staticd for the static routes a student types."""
DAEMONS = ("zebra", "ospfd", "ospf6d", "bgpd", "ripd", "ripngd", "isisd", "staticd", "bfdd")
"""The daemons a router may run, in the order they start (zebra first: the others connect to it). A router runs them
all unless its settings name fewer: what a student types into vtysh (`router bgp 1`, `router rip`) is taken at once,
as on a real router whose daemons are switched on, whatever its configuration said when it was deployed."""

# Lines that would make a daemon open a file of the config's choosing outside the router's own logs directory, their
# working directory: a log file named with a path (`log file`, `log filtered-file`), an RFC 5424 log target (`log
# extended-syslog NAME`, whose ` destination file PATH create` writes any path: not in FRR 8.4's vtysh, in the daemons
# already), and BGP's MRT dumps; FRR takes any unambiguous abbreviation of each word (`lo fi /x`). The daemons run
# inside the node, as the lab's owner, where the host's files are read-only: these are refused as well, for a lab to
# stay within its router's directory whatever the node's mounts. Each: first words, second words, refused only
# when a later word names a path.
_FILE_COMMANDS = ((("log",), ("file", "filtered-file"), True), (("log",), ("extended-syslog",), False),
                  (("dump",), ("bgp",), False))
# vtysh's own commands that read or write a file of the text's choosing, once a configuration has left configuration
# mode (`exit`): `copy FILE running-config` and `output file FILE`, by the shortest prefix vtysh takes for each
_SHELL_FILE_COMMANDS = (("copy", 3), ("output", 2))
_HEADER = ("Building configuration...", "Current configuration:")


def _statements(text: str) -> list[tuple[int, str]]:
    """(line number, statement) for each line that is not blank or a comment."""
    return [(number, line.strip()) for number, line in enumerate(text.splitlines(), 1)
            if line.strip() and not line.strip().startswith("!")]


def _abbreviates(word: str, commands: tuple[str, ...], shortest: int = 1) -> bool:
    return len(word) >= shortest and any(command.startswith(word) for command in commands)


def _opens_file(line: str) -> bool:
    words = line.split()
    if words and any(_abbreviates(words[0], (command,), shortest) for command, shortest in _SHELL_FILE_COMMANDS):
        return True
    for first, second, with_a_path in _FILE_COMMANDS:
        if len(words) >= 2 and _abbreviates(words[0], first, 2) and _abbreviates(words[1], second):
            return not with_a_path or any("/" in word for word in words[2:])
    return False


def file_commands(text: str) -> list[tuple[int, str]]:
    """The statements that would write or read a file outside the router's directory, by line number."""
    return [(number, line) for number, line in _statements(text) if _opens_file(line)]


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
