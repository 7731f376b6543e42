"""An action as data: its id, title, keys, icon and tip, what it does, and when it is enabled. The menu modules
(file, edit, view, lab) declare theirs in the order their menu shows them; the builder makes the QActions.

    Action("lab.save_running", "Save &running configuration…", lambda d: d.parts.save_running.save_running(),
           enabled_when=lambda c: c.deployer and not c.busy and bool(c.deployed_lab), tip="Write what the running …")

`d` is the Designer (the window and its parts), `c` the Context (the designer's state as the rules read it).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import QMenu, QStyle

from vtopo.gui.actions.context import Context
from vtopo.gui.actions.designer import Designer

Key = QKeySequence.StandardKey
Shortcut = Key | str  # a platform's standard key (Key.Copy), or one key sequence ("Ctrl+Shift+D")
Rule = Callable[[Context], bool]
Tip = Callable[[Context], str]


def always(_context: Context) -> bool:
    return True


class Scope(Enum):
    WINDOW = "window"  # the keys work anywhere in the window
    CANVAS = "canvas"  # only while the canvas has the focus: Delete or Ctrl+C in a panel's table stays there


@dataclass(frozen=True)
class Action:
    """One entry of the menus. `run` does it; a checkable entry has `toggle` instead, which gets the new state, and
    `initially` says its state when the window opens (toggle is called with it). An action another object makes
    (the undo stack's Undo, an overlay's switch) comes from `made_by`: the table gives it its keys and its place."""

    id: str  # menu.name: "lab.deploy"; the name is also the action's attribute on Actions (`actions.deploy`)
    title: str
    run: Callable[[Designer], object] | None = None
    toggle: Callable[[Designer, bool], object] | None = None
    initially: Callable[[Designer], bool] | None = None
    made_by: Callable[[Designer], QAction] | None = None
    keys: tuple[Shortcut, ...] = ()
    scope: Scope = Scope.WINDOW
    icon: Callable[[QStyle], QIcon] | None = None
    tip: str | Tip = ""  # a text, or a text from the context (why the action is disabled, say)
    enabled_when: Rule = always
    group: str = ""  # checkable actions of one group are exclusive (the themes)

    @property
    def name(self) -> str:
        return self.id.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Separator:
    pass


@dataclass(frozen=True)
class Submenu:
    """A menu inside a menu: its own actions, or entries `fill` makes each time it opens (the recent files)."""

    id: str
    title: str
    items: tuple[Item, ...] = ()
    fill: Callable[[Designer, QMenu], None] | None = None
    enabled_when: Rule = always


Item = Action | Separator | Submenu
SEPARATOR = Separator()


@dataclass(frozen=True)
class Menu:
    """A menu of the menu bar; `elsewhere` holds the actions of its family that only context menus show."""

    title: str
    items: tuple[Item, ...]
    elsewhere: tuple[Action, ...] = ()

    def actions(self) -> list[Action]:
        """Every action of the menu, its submenus' and those shown elsewhere, in order."""
        found: list[Action] = []
        pending: list[Item] = [*self.items, *self.elsewhere]
        while pending:
            item = pending.pop(0)
            if isinstance(item, Action):
                found.append(item)
            elif isinstance(item, Submenu):
                pending[:0] = item.items
        return found


def key_sequences(*keys: Shortcut) -> list[QKeySequence]:
    """Every binding of the keys on this platform, each once: a platform's standard key may already be one of our
    extras, and a key bound twice to one action is ambiguous, so Qt fires neither."""
    unique: list[QKeySequence] = []
    for key in keys:
        for sequence in QKeySequence.keyBindings(key) if isinstance(key, Key) else [QKeySequence(key)]:
            if not sequence.isEmpty() and sequence not in unique:
                unique.append(sequence)
    return unique
