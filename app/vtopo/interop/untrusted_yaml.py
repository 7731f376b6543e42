"""YAML from a file someone else wrote (a containerlab topology): PyYAML's safe loader, held to the limits of
vtopo's own lab files, plus a bound on what its anchors and aliases expand to.

An alias is a reference: `a: &x [...]` then `b: [*x, *x]` costs nothing to parse, but nine levels of ten aliases
each (the "billion laughs") stand for a billion values once anything walks the data. The composer below counts,
for each node it builds, how many values it stands for with its aliases expanded, and refuses the file when that
passes MAX_VALUES or when an alias refers to a node that contains it. `parse` returns plain dicts with string keys,
lists, strings, numbers, booleans and None, or raises LabError; nothing a file holds makes it raise anything else.
"""
from __future__ import annotations

from typing import Any, Callable

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode

from vtopo.model.problems import LabError, Problem
from vtopo.model.untrusted_json import MAX_BYTES, MAX_DEPTH, checked

MAX_VALUES = 100_000
"""Values a topology may stand for with its aliases expanded: a containerlab lab of 1,000 nodes holds about 20,000."""


class _Refused(yaml.YAMLError):
    def __init__(self, message: str, node: Node | None = None) -> None:
        where = f"line {node.start_mark.line + 1}: " if node is not None else ""
        super().__init__(where + message)


class _Loader(yaml.SafeLoader):
    """The safe loader, bounded: nesting depth, values after alias expansion, keys written twice, and no YAML type
    that a topology has no use for (binary, sets, ordered maps); a date stays the text it was written as."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._depth = 0
        self._sizes: dict[int, int] = {}

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            node = super().compose_node(parent, index)  # the node the alias names, whose size is known once built
            if node is not None and id(node) not in self._sizes:
                raise _Refused("an alias (*name) refers to a list or object that contains it, which never ends",
                               node)
            return node
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _Refused(f"lists and objects are nested more than {MAX_DEPTH} levels deep")
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if node is None:
            return None
        self._sizes[id(node)] = self._expanded_size(node)
        if self._sizes[id(node)] > MAX_VALUES:
            raise _Refused(f"this stands for more than {MAX_VALUES:,} values once its aliases (*name) are expanded; "
                           "no topology is that big", node)
        return node

    def compose_mapping_node(self, anchor: Any) -> MappingNode:
        node: MappingNode = super().compose_mapping_node(anchor)
        seen: set[str] = set()
        for key, _ in node.value:
            if isinstance(key, ScalarNode) and key.value != "<<":
                if key.value in seen:
                    raise _Refused(f"the key {key.value!r} is written more than once in this object; which one "
                                   "counts is ambiguous", key)
                seen.add(key.value)
        return node

    def _expanded_size(self, node: Node) -> int:
        if isinstance(node, ScalarNode):
            return 1
        children = [item for pair in node.value for item in pair] if isinstance(node, MappingNode) else node.value
        return 1 + sum(self._sizes[id(child)] for child in children)

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        mapping = super().construct_mapping(node, deep)
        keys = {key: _key_text(key, node) for key in mapping}
        return {keys[key]: value for key, value in mapping.items()}

    def construct_undefined(self, node: Node) -> Any:
        raise _Refused(f"the tag {node.tag} is not allowed in a topology", node)

    def _refuse_type(self, node: Node) -> Any:
        raise _Refused(f"a topology holds no values of YAML type {node.tag.rsplit(':', 1)[-1]}", node)

    def _as_written(self, node: ScalarNode) -> str:
        return self.construct_scalar(node)


for _tag in ("binary", "set", "omap", "pairs"):
    _Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", _Loader._refuse_type)
_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader._as_written)
_Loader.add_constructor(None, _Loader.construct_undefined)


def _key_text(key: Any, node: MappingNode) -> str:
    """A key as text: containerlab reads keys as strings, so `1:` is the node "1"; a list or null is no name."""
    if isinstance(key, str):
        return key
    if isinstance(key, (int, float)) and not isinstance(key, bool):
        return str(key)
    raise _Refused(f"the key {key!r} is not a name (write it in quotes if it is one)", node)


def parse(text: str, multiline: Callable[[str], bool] = lambda path: False) -> Any:
    """Parse untrusted YAML text. `multiline(path)` says which string values may hold newlines."""
    if len(text) > MAX_BYTES:
        raise LabError([Problem(f"the file is larger than {MAX_BYTES // 1024 // 1024} MiB; no topology is that big",
                                path="$")])
    loader: _Loader | None = None
    try:
        loader = _Loader(text)  # reads the text's start: a character YAML does not allow stops it here
        raw = loader.get_single_data()
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"line {mark.line + 1} column {mark.column + 1}: " if mark is not None else ""
        raise LabError([Problem(f"not valid YAML ({where}{error.problem or error.context})", path="$")]) from None
    except yaml.YAMLError as error:
        raise LabError([Problem(f"refused: {error}", path="$")]) from None
    except (ValueError, RecursionError) as error:  # an integer of 5,000 digits; a key nested past the stack
        raise LabError([Problem(f"not a usable topology: {str(error).split(';')[0]}", path="$")]) from None
    finally:
        if loader is not None:
            loader.dispose()
    return checked(raw, multiline)
