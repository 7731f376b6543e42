"""Hypothesis strategies for untrusted JSON: hostile scalars, random documents, and every path into one."""
from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import strategies as st

# VTOPO_FUZZ_EXAMPLES=20000 for a longer hunt by hand
EXAMPLES = int(os.environ.get("VTOPO_FUZZ_EXAMPLES") or (1000 if os.environ.get("CI", "").lower() == "true" else 300))
DEEP = "\x00deep\x00"  # stands for 5,000 nested lists, spliced into the text (json.dumps cannot write them)
HOSTILE_STRINGS = ("garbage/24", "10.0.0.1", "10.0.0.1/33", "fe80::1%eth0\n;id", "eth0", "/etc/shadow", "fat:rw:/root",
                   "json:{}", "a,b=c", "\ud800", "\x00", "line\nbreak", "NaN", "", " ", "builtin", "bridge", "p1",
                   "router", "vm", "host", "macvtap", "0.0.0.0/0", "::/0", "127.0.0.1/8", "x" * 300)
# numbers inside strings, which kinds read with int(): a port's index, an OpenFlow port, an OSPF area
DIGIT_STRINGS = ("p" + "9" * 5000, "eth" + "8" * 5000, "9" * 5000, "in_port=" + "7" * 4400 + ",actions=drop",
                 "in_port=1,actions=output:" + "3" * 4400, "p" + "\u0663" * 4400, "0." + "1" * 40,
                 "p99999999999999999999")
HOSTILE_NUMBERS = (0, -1, 1, 2**63, -(2**63), 10**4000, 1e308, -1e308, 0.5, 65536, float("nan"), float("inf"))

digit_strings = st.sampled_from(DIGIT_STRINGS) | st.builds(lambda stem, digits: stem + digits,
                                                            st.sampled_from(("", "p", "eth", "in_port=")),
                                                            st.text("0123456789", min_size=1, max_size=60))
scalars = st.one_of(st.none(), st.booleans(), st.sampled_from(HOSTILE_NUMBERS), st.integers(), st.floats(),
                    st.sampled_from(HOSTILE_STRINGS), digit_strings, st.text(max_size=12))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8) | st.sampled_from(HOSTILE_STRINGS), inner,
                                                 max_size=4)), max_leaves=12)


def paths_in(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths_in(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths_in(item, path + (index,))
    return found


def mutated_text(draw: st.DrawFn, original: Any, *, twice: str) -> str:
    """`original` with one to three values replaced, deleted or nested, as JSON text; sometimes the key `twice` is
    written twice, or the text is cut short or has a character changed."""
    doc = json.loads(json.dumps(original))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths_in(doc)))
        if not path:
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(("replace", "delete", "nest")))
        if action == "delete":
            del parent[path[-1]]
        elif action == "nest":
            parent[path[-1]] = DEEP if draw(st.booleans()) else [parent[path[-1]]]
        else:
            parent[path[-1]] = draw(json_values)
    text = json.dumps(doc, ensure_ascii=draw(st.booleans())).replace(json.dumps(DEEP), "[" * 5000 + "]" * 5000)
    if draw(st.integers(0, 9)) == 0:
        text = text.replace(f'"{twice}": ', f'"{twice}": "twice", "{twice}": ', 1)
    if draw(st.integers(0, 9)) == 0:
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] if draw(st.booleans()) else text[:cut] + draw(st.characters()) + text[cut + 1:]
    return text


def with_numbers_in_strings(draw: st.DrawFn, original: Any) -> str:
    """`original` with one to three of its strings (a port, a flow, an area) made long strings of digits, as JSON."""
    doc = json.loads(json.dumps(original))
    strings = [path for path in paths_in(doc) if path and isinstance(_at(doc, path), str)]
    for path in draw(st.lists(st.sampled_from(strings), min_size=1, max_size=3)):
        parent = _at(doc, path[:-1])
        parent[path[-1]] = draw(st.sampled_from(DIGIT_STRINGS) | digit_strings)
    return json.dumps(doc)


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc
