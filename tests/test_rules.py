"""The shared rules: the editor and the compiler ask the same function, so they agree."""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest

from vtopo.compile.resolve import resolve
from vtopo.lab import registry
from vtopo.model.rules import is_valid_node_name, lab_name_refusal, lab_tag, link_refusal
from vtopo.model.topology import Endpoint, Link, Node, Topology


@dataclass(frozen=True)
class FirewallLike:
    """A third-party kind that lists the container, while the container does not list it."""

    name: str = "firewall"
    connects_to: frozenset[str] = frozenset({"container"})
    connect_hint: str = ""


def test_a_link_is_allowed_when_either_kind_lists_the_other():
    container = registry().kinds["container"]
    assert "firewall" not in container.connects_to
    assert link_refusal(FirewallLike(), container) == ""
    assert link_refusal(container, FirewallLike()) == ""


def test_the_compiler_refuses_exactly_the_pairs_the_rule_refuses():
    kinds = registry().kinds
    for a, b in itertools.product(sorted(kinds), repeat=2):
        topology = Topology(name="pair")
        topology.add_node(Node(id="a", name="a", kind=a))
        topology.add_node(Node(id="b", name="b", kind=b))
        topology.add_link(Link(id="l", a=Endpoint("a", kinds[a].ports.name(kinds[a].ports.first)),
                               b=Endpoint("b", kinds[b].ports.name(kinds[b].ports.first))))
        refused = [p.message for p in resolve(topology, registry()).problems if "cannot be linked" in p.message]
        assert refused == ([link_refusal(kinds[a], kinds[b])] if link_refusal(kinds[a], kinds[b]) else []), (a, b)


def test_names_and_tags():
    assert is_valid_node_name("r1") and is_valid_node_name("lan-a_2")
    assert not is_valid_node_name("-r") and not is_valid_node_name("r 1") and not is_valid_node_name("")
    assert lab_tag("vt1a2") == "vtopo:vt1a2"


@pytest.mark.parametrize("name, refusal", [
    ("\u0435xam", "mixes Latin with Cyrillic: U+0435 (cyrillic small letter ie)"),
    ("ex\u0430m", "mixes Latin with Cyrillic: U+0430 (cyrillic small letter a)"),
    ("\u03a9mega", "mixes Latin with Greek: U+03A9 (greek capital letter omega)"),
    ("exam\u0301", "holds U+0301 (combining acute accent) where Unicode has the letter it makes (NFC): "
                   "write 'exa\u1e3f'"),
    ("\u212bngstrom", "holds U+212B (angstrom sign) where Unicode has the letter it makes (NFC)"),
    ("exam\u0338", "may hold no combining mark that is not its script's own, and this one holds U+0338 (combining "
                   "long solidus overlay)"),
])
def test_a_lab_name_of_two_scripts_or_with_a_loose_mark_is_refused_naming_the_character(name, refusal):
    assert refusal in lab_name_refusal(name)


@pytest.mark.parametrize("name", ["exam", "exam-2_b.1", "\u0435\u0445\u0430\u043c", "\u044d\u043a\u0437\u0430\u043c\u0435\u043d",
                                  "\u03b5\u03be\u03ad\u03c4\u03b1\u03c3\u03b7", "\u8a66\u9a13\u30cd\u30c3\u30c8\u30ef\u30fc\u30af",
                                  "\uc2dc\ud5d8", "lab\u5b9e\u9a8c", "K\u00f6ln", "\u092a\u0930\u0940\u0915\u094d\u0937\u093e",
                                  "\u0e17\u0e14\u0e2a\u0e2d\u0e1a"])
def test_a_lab_name_in_one_script_or_in_scripts_written_together_is_accepted(name):
    """Cyrillic, Greek, Japanese (Han and Katakana), Korean, Chinese beside Latin, a composed ö, and Devanagari and
    Thai, whose vowel signs are marks of their own script."""
    assert lab_name_refusal(name) == ""
