"""Converters from older .vtopo versions to the current one, one small step each."""
from __future__ import annotations

from typing import Any, Callable

CURRENT_VERSION = 3

Document = dict[str, Any]


def _v1_to_v2(doc: Document) -> Document:
    """Version 1 kept positions as flat x/y, link ends as "node:port" strings and lab fields at the top."""

    def endpoint(ref: Any, interface: Any) -> Any:
        if not isinstance(ref, str) or ":" not in ref:
            return ref
        node, port = ref.rsplit(":", 1)
        return {"node": node, "port": port, "interface": interface if isinstance(interface, dict) else {}}

    def each(key: str, convert: Callable[[Document], Document]) -> Any:
        """The list under `key` converted item by item; anything else is left for the reader to name."""
        items = doc.get(key, [])
        return [convert(dict(item)) if isinstance(item, dict) else item for item in items] \
            if isinstance(items, list) else items

    def node(node: Document) -> Document:
        node["position"] = {"x": node.pop("x", 0), "y": node.pop("y", 0)}
        return node

    def link(link: Document) -> Document:
        link["a"] = endpoint(link.pop("from", None), link.pop("from_interface", None))
        link["b"] = endpoint(link.pop("to", None), link.pop("to_interface", None))
        return link

    nodes, links = each("nodes", node), each("links", link)
    return {
        "format": "vtopo",
        "version": 2,
        "lab": {"id": doc.get("id", ""), "name": doc.get("name", ""), "notes": doc.get("notes", "")},
        "nodes": nodes,
        "links": links,
        "annotations": [],
    }


def _v2_to_v3(doc: Document) -> Document:
    """Version 3 adds the optional "checks" and "experiment" sections; a version 2 lab has neither."""
    return {**{key: value for key, value in doc.items() if key not in ("checks", "experiment")}, "version": 3}


MIGRATIONS: dict[int, Callable[[Document], Document]] = {1: _v1_to_v2, 2: _v2_to_v3}


def migrate(doc: Document, version: int) -> Document:
    """Bring `doc` (at `version`) up to CURRENT_VERSION by chaining the converters."""
    while version < CURRENT_VERSION:
        doc = MIGRATIONS[version](doc)
        version += 1
    return doc
