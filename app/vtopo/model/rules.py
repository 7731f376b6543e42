"""Rules that the editor, the loader, the compiler and the host layer share, written once so they cannot drift."""
from __future__ import annotations

import json
import re
import unicodedata
from enum import StrEnum
from typing import Collection, Protocol

NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
NODE_NAME_RULE = "a node name may hold only letters, digits, '-' and '_', and must start with a letter or digit"
INTERFACE_NAME = re.compile(r"[A-Za-z0-9_.-]+")  # and no longer than the kernel allows (vtopo.lab_terms)
CHECKPOINT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
CHECKPOINT_NAME_RULE = ("a checkpoint name may hold only letters, digits, '.', '-' and '_', must start with a letter or "
                        "digit, and is at most 64 characters long")
MAC_ADDRESS = re.compile(r"[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}")

LAB_TAG_PREFIX = "vtopo:"
"""Link aliases (`ip link set ... alias`) of the devices a lab made start with this, then the lab's prefix."""
CLIENTS_GROUP = "vtopo"  # root and its members may use the agent; they read the lab records (root:vtopo, 0640)
OVS_LAB_KEY = "vtopo-lab"
"""The external_ids key that marks an OVS bridge, port or interface as a lab's; its value is the lab's prefix."""
DEFAULT_VLAN = 1  # the VLAN a port is in until told otherwise: a VLAN-filtering bridge's default_pvid
NETNS_DIR = "/run/netns"  # where network namespaces are kept, as iproute2 keeps them
NODE_TMPFS = ("/tmp", "/var/tmp", "/run")
"""What each node gets empty and its own; /run hides the host's sockets and /run/netns from what runs inside."""
NODE_KERNEL_FILES = ("/proc", "/sys")
"""What stays writable in a node whose host's files are read-only, beside its own: the kernel guards these itself."""
NODE_FILES_DIR = "/run/vtopo-node"  # inside a node's own /run: its hostname and hosts files, bound over /etc's
PRIVATE_DIRECTORY = 0o700  # a directory's mode when its op names none
PASSAGE_DIRECTORY = 0o711  # a directory others may pass through, not list


def lab_name_refusal(name: str) -> str:
    """Why `name` may not name a lab, or "". Every member and the teacher read each lab's name in `vtopo status`, so it
    must read as what it is: no Unicode format character (category Cf: a zero-width space or joiner, a bidirectional
    mark, a soft hyphen), which shows nothing or shows the name in another order; no space at either end; no letters
    of two scripts that look alike (an "exam" with a Cyrillic е, see `_mixed_script`); and no combining mark but a
    script's own (see `_loose_mark`)."""
    for char in name:
        if unicodedata.category(char) == "Cf":
            return (f"a lab's name may hold no invisible or direction-changing character, and this one holds "
                    f"{_character(char)}")
    if name != name.strip():
        return "a lab's name may not start or end with a space"
    if name.isascii():  # Latin letters, digits and punctuation: nothing to compose, and one script
        return ""
    return _loose_mark(name) or _mixed_script(name)


SCRIPTS_WRITTEN_TOGETHER = ({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}, {"LATIN", "HAN", "BOPOMOFO"},
                            {"LATIN", "HAN", "HANGUL"})
"""The scripts a name may mix, as Unicode TR39's "highly restrictive" level has it: Japanese, Chinese and Korean
writing, with Latin letters. Any other two scripts in a name (Latin and Cyrillic, Latin and Greek) are refused."""
NO_SCRIPT = {"COMMON", "INHERITED"}  # digits, punctuation and marks, which take their letter's script


def _mixed_script(name: str) -> str:
    """Letters of two scripts not written together: the name's main script and the first letter of the script it
    holds fewest of (the one Cyrillic е of an "exam")."""
    letters: dict[str, list[str]] = {}  # each script's letters, in the order the name holds them
    for char in name:
        if (script := _script_of(char)) not in NO_SCRIPT:
            letters.setdefault(script, []).append(char)
    if len(letters) < 2 or any(set(letters) <= together for together in SCRIPTS_WRITTEN_TOGETHER):
        return ""
    main, *_, odd = sorted(letters, key=lambda script: -len(letters[script]))
    return (f"a lab's name must be written in one script, and this one mixes {main.title()} with {odd.title()}: "
            f"{_character(letters[odd][0])}")


def _loose_mark(name: str) -> str:
    """A combining mark that makes a letter Unicode has whole (e + U+0301, which is é), or that no script of its own
    holds (Unicode's Inherited script: accents and overlays put on any letter, U+0338 striking a letter through)."""
    composed = unicodedata.normalize("NFC", name)
    if composed != name:
        mark = next((char for char in name if unicodedata.combining(char)), None) or \
            next(char for char in name if char not in composed)  # a sign Unicode has twice: U+212B for Å
        return (f"a lab's name must be written with whole letters, and this one holds {_character(mark)} where "
                f"Unicode has the letter it makes (NFC): write {composed!r}")
    for char in name:
        if unicodedata.category(char).startswith("M") and _script_of(char) == "INHERITED":
            return f"a lab's name may hold no combining mark that is not its script's own, and this one holds " \
                   f"{_character(char)}"
    return ""


def _script_of(char: str) -> str:
    """A character's script as Unicode's Scripts.txt names it (LATIN, CYRILLIC, COMMON, INHERITED...): its table loads
    (80 ms, urllib with it) only for a name that is not ASCII."""
    from confusable_homoglyphs import categories

    return str(categories.alias(char))


def _character(char: str) -> str:
    """U+0435 (cyrillic small letter ie)."""
    return f"U+{ord(char):04X} ({unicodedata.name(char, 'an unnamed character').lower()})"


def is_valid_node_name(name: str) -> bool:
    return NODE_NAME.fullmatch(name) is not None


def unique_name(stem: str, taken: Collection[str]) -> str:
    """stem1, or the next number no name in `taken` has."""
    number = 1
    while f"{stem}{number}" in taken:
        number += 1
    return f"{stem}{number}"


def stem_of_name(name: str) -> str:
    """c12 -> c, lan-a3 -> lan-a, r -> r: the stem a copy of this node is renamed from."""
    stem = name.rstrip("0123456789")
    return stem if stem and is_valid_node_name(stem) else "n"


def lab_tag(prefix: str) -> str:
    """The tag on everything a lab makes, so that destroy and cleanup find its objects and no others."""
    return f"{LAB_TAG_PREFIX}{prefix}"


class LinkableKind(Protocol):
    """What the link rule needs to know about a node kind."""

    @property
    def name(self) -> str: ...

    @property
    def connects_to(self) -> frozenset[str]: ...

    @property
    def connect_hint(self) -> str: ...


def link_refusal(a: LinkableKind, b: LinkableKind) -> str:
    """Why nodes of these two kinds cannot be linked, or "": a link is allowed when either kind lists the other."""
    if b.name in a.connects_to or a.name in b.connects_to:
        return ""
    return f"a {a.name} cannot be linked to a {b.name}. {a.connect_hint}".strip()


def subinterface_name(interface: str, vlan: int) -> str:
    """An 802.1Q subinterface's name, as `ip link add link eth0 name eth0.10 type vlan id 10` names it."""
    return f"{interface}.{vlan}"


def stable_digest(text: str) -> str:
    """The SHA-1 of `text`, in hex: the names and numbers made from it are the same on every run and every host.
    hashlib loads OpenSSL (~2 ms), which only compiling a lab needs: `vtopo kinds` does without."""
    import hashlib

    return hashlib.sha1(text.encode()).hexdigest()


def ovs_lab_tag(lab: str) -> str:
    """The column setting that tags an OVS object as the lab's, for `set Bridge|Port|Interface NAME <this>`.
    ovs-vsctl parses values as OVSDB atoms; a JSON-quoted string is always taken literally."""
    return f"external_ids:{OVS_LAB_KEY}={json.dumps(lab)}"


class Place(StrEnum):
    """Where a startup command runs."""

    NODE = "node"  # inside a container or router, as root of the lab's user namespace in a member's lab
    GUEST = "guest"  # typed into a VM's console: it runs in the guest
    HOST = "host"  # the host node: on the host itself, which only a lab root deploys may do
