"""The entries of the node and link context menus, kept in a small registry so that a feature adds its own
entries (start/stop a node, take a link down, capture on a link) without touching the menu code.

    window.menu_actions.menus.add_link_entry(MenuEntry("Capture…", capture.start, section="inspect"))
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

from PySide6.QtWidgets import QMenu


def _always(_subject_id: str) -> bool:
    return True


@dataclass(frozen=True)
class MenuEntry:
    """One entry; `run` and `enabled` get the id of the node or link the menu is for."""

    text: str
    run: Callable[[str], None]
    enabled: Callable[[str], bool] = _always
    section: str = ""


class ContextMenus:
    """Entries by subject ("node", "link"), in the order they were added; sections are separated by a line."""

    def __init__(self) -> None:
        self._entries: dict[str, list[MenuEntry]] = {"node": [], "link": []}

    def add_node_entry(self, entry: MenuEntry) -> None:
        self._entries["node"].append(entry)

    def add_link_entry(self, entry: MenuEntry) -> None:
        self._entries["link"].append(entry)

    def fill(self, menu: QMenu, subject: str, subject_id: str) -> None:
        """Append the subject's entries to the menu, grouped by section."""
        sections: dict[str, list[MenuEntry]] = {}
        for entry in self._entries[subject]:
            sections.setdefault(entry.section, []).append(entry)
        for entries in sections.values():
            if not menu.isEmpty():
                menu.addSeparator()
            for entry in entries:
                action = menu.addAction(entry.text, partial(entry.run, subject_id))
                action.setEnabled(entry.enabled(subject_id))
