"""The table of the designer's actions, read as data: ids and names once each, and no key that two actions share or
that Qt's own widgets already read, as a Linux desktop binds the standard keys (X11: Delete is Del and Ctrl+D there,
where the offscreen platform of the other tests has Windows' keys)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import pytest
from PySide6.QtGui import QKeySequence

from vtopo.gui.actions.builder import table
from vtopo.gui.actions.spec import Action, Key

PORTABLE = QKeySequence.SequenceFormat.PortableText
STANDARD_KEYS = """
import json
from PySide6.QtGui import QGuiApplication, QKeySequence
app = QGuiApplication([])
print(json.dumps({key.name: [sequence.toString(QKeySequence.SequenceFormat.PortableText)
                             for sequence in QKeySequence.keyBindings(key)] for key in QKeySequence.StandardKey}))
"""
# The standard keys Qt's own widgets act on: a text field, a table, a text browser, a dialog. A key one of them
# gives fires that widget's meaning while it has the focus, whatever an action bound to it. (The others, Refresh or
# Italic, are only a platform's suggestion to a program: they are taken when an action declares them.)
WIDGET_KEYS = {key for key in Key if key.name.startswith(("MoveTo", "Select", "Delete"))} | {
    Key.Undo, Key.Redo, Key.Cut, Key.Copy, Key.Paste, Key.Backspace, Key.InsertParagraphSeparator,
    Key.InsertLineSeparator, Key.Cancel, Key.Back, Key.Forward, Key.NextChild, Key.PreviousChild, Key.WhatsThis}


DESKTOPS = {"X11": "", "GNOME": "GNOME"}  # Qt's keyboard schemes of a Linux desktop: GNOME's adds Ctrl+G, Ctrl+R...


@pytest.fixture(scope="module", name="desktops")
def fixture_desktops() -> dict[str, dict[str, list[str]]]:
    """Each standard key's bindings, by name, on X11 (Xvfb) in a plain session and in a GNOME one."""
    found: dict[str, dict[str, list[str]]] = {}
    for desktop, name in DESKTOPS.items():
        run = subprocess.run(["xvfb-run", "-a", sys.executable, "-c", STANDARD_KEYS], capture_output=True, text=True,
                             env={**os.environ, "QT_QPA_PLATFORM": "xcb", "XDG_CURRENT_DESKTOP": name}, timeout=120,
                             check=True)
        found[desktop] = json.loads(run.stdout.splitlines()[-1])
    return found


def bindings(action: Action, standard: dict[str, list[str]]) -> set[str]:
    return {binding for key in action.keys
            for binding in (standard[key.name] if isinstance(key, Key) else [QKeySequence(key).toString(PORTABLE)])}


def test_ids_and_names_are_each_once_in_the_table() -> None:
    actions = table()
    for counted in (Counter(action.id for action in actions), Counter(action.name for action in actions)):
        assert [twice for twice, count in counted.items() if count > 1] == []


@pytest.mark.parametrize("desktop", DESKTOPS)
def test_no_key_has_two_meanings(desktop: str, desktops: dict[str, dict[str, list[str]]]) -> None:
    """A key is an action's, or the meaning Qt's widgets give it, never both: Qt would fire neither."""
    standard = desktops[desktop]
    assert "Ctrl+D" in standard["Delete"], "the platform where Duplicate's Ctrl+D never fired"
    owners: dict[str, list[str]] = {}
    for key in WIDGET_KEYS:
        for binding in standard[key.name]:
            owners.setdefault(binding, []).append(f"Qt's {key.name}")
    for action in table():
        declared = {f"Qt's {key.name}" for key in action.keys if isinstance(key, Key)}
        for binding in bindings(action, standard):
            owners[binding] = [owner for owner in owners.get(binding, []) if owner not in declared]
            owners[binding].append(action.id)
    taken = {binding: who for binding, who in owners.items()
             if len(who) > 1 and not all(owner.startswith("Qt's") for owner in who)}
    assert taken == {}
