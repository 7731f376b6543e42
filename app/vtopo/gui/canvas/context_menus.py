"""The entries of the node and link context menus, kept in a small registry so that a feature adds its own
entries (start/stop a node, take a link down, capture on a link) without touching the menu code.

    window.menu_actions.menus.add_link_entry(MenuEntry("Take down", operate.take_down, section="state"))

Entries whose number or text depend on the subject (one "Capture on PORT" per port) are built when the menu
opens, by a `MenuEntries` added the same way, optionally under a submenu of their own.
"""
from __future__ import annotations

from collections.abc import Sequence
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


@dataclass(frozen=True)
class MenuEntries:
    """Entries built for each subject when its menu opens; under `submenu` when it is named (the submenu is
    disabled when none of its entries is enabled)."""

    build: Callable[[str], Sequence[MenuEntry]]
    submenu: str = ""
    section: str = ""


Registered = MenuEntry | MenuEntries


class ContextMenus:
    """Entries by subject ("node", "link"), in the order they were added; sections are separated by a line."""

    def __init__(self) -> None:
        self._entries: dict[str, list[Registered]] = {"node": [], "link": []}

    def add_node_entry(self, entry: Registered) -> None:
        self._entries["node"].append(entry)

    def add_link_entry(self, entry: Registered) -> None:
        self._entries["link"].append(entry)

    def fill(self, menu: QMenu, subject: str, subject_id: str) -> None:
        """Append the subject's entries to the menu, grouped by section."""
        sections: dict[str, list[Registered]] = {}
        for entry in self._entries[subject]:
            sections.setdefault(entry.section, []).append(entry)
        for entries in sections.values():
            if not menu.isEmpty():
                menu.addSeparator()
            for entry in entries:
                if isinstance(entry, MenuEntry):
                    _add(menu, entry, subject_id)
                elif entry.submenu:
                    submenu = menu.addMenu(entry.submenu)
                    built = entry.build(subject_id)
                    submenu.setEnabled(any([_add(submenu, one, subject_id) for one in built]))
                else:
                    for one in entry.build(subject_id):
                        _add(menu, one, subject_id)


def _add(menu: QMenu, entry: MenuEntry, subject_id: str) -> bool:
    """Add one entry; whether it is enabled."""
    enabled = entry.enabled(subject_id)
    menu.addAction(entry.text, partial(entry.run, subject_id)).setEnabled(enabled)
    return enabled
