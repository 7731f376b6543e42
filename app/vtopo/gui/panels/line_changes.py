"""A long text shown in a QPlainTextEdit, changed by its changed lines only.

Setting the Explain dock's 3 MB script of a 2,000-node lab again after each check held the GUI thread 80 ms (the
document's 60,000 blocks rebuilt and laid out); a rename changes 30 of its lines. The lines that differ are found
off the GUI thread (document.line_diff: by the designer's checker, or on a worker), and the GUI thread edits only
those blocks (`apply_changes`).
"""
from __future__ import annotations

from PySide6.QtGui import QTextCursor, QTextDocument

from vtopo.gui.document.line_diff import LineChange


def apply_changes(document: QTextDocument, changes: list[LineChange]) -> None:
    """Edit the document's blocks as `changes` say, the last change first (so that block numbers hold), as one
    edit."""
    cursor = QTextCursor(document)
    cursor.beginEditBlock()
    for change in reversed(changes):
        _replace(document, cursor, change)
    cursor.endEditBlock()


def _replace(document: QTextDocument, cursor: QTextCursor, change: LineChange) -> None:
    move, keep = QTextCursor.MoveOperation, QTextCursor.MoveMode.KeepAnchor
    text = "\n".join(change.lines)
    if change.end > change.start:
        cursor.setPosition(document.findBlockByNumber(change.start).position())
        last = document.findBlockByNumber(change.end - 1)
        cursor.setPosition(last.position() + last.length() - 1, keep)
        if change.lines:
            cursor.insertText(text)
            return
        if last.next().isValid():  # the lines go, with the line break after them
            cursor.setPosition(last.next().position(), keep)
        elif change.start > 0:  # the last lines go, with the line break before them
            cursor.setPosition(document.findBlockByNumber(change.start).position() - 1)
            cursor.setPosition(last.position() + last.length() - 1, keep)
        cursor.removeSelectedText()
    elif change.start < document.blockCount():
        cursor.setPosition(document.findBlockByNumber(change.start).position())
        cursor.insertText(f"{text}\n")
    else:
        cursor.movePosition(move.End)
        cursor.insertText(f"\n{text}")
