"""The system clipboard: a selection travels as a small .vtopo document (vtopo.model.fragment), links inside
it included."""
from __future__ import annotations

from PySide6.QtCore import QMimeData
from PySide6.QtGui import QGuiApplication

from vtopo.model.fragment import Fragment
from vtopo.model.problems import LabError, Problem

MIME_TYPE = "application/x-vtopo-fragment"


def put_on_clipboard(fragment: Fragment) -> None:
    data = QMimeData()
    text = fragment.dumps()
    data.setData(MIME_TYPE, text.encode("utf-8"))
    data.setText(text)
    QGuiApplication.clipboard().setMimeData(data)


def release_clipboard() -> None:
    """Take vtopo's data off the clipboard before the application goes away.

    A PySide process that exits while its own QMimeData is on the clipboard crashes in Qt's teardown.
    """
    clipboard = QGuiApplication.clipboard()
    data = clipboard.mimeData()
    if data is not None and data.hasFormat(MIME_TYPE):
        clipboard.clear()


def from_clipboard() -> Fragment | None:
    """The fragment on the clipboard, None when there is none; LabError when another program put damaged data
    under vtopo's type."""
    data = QGuiApplication.clipboard().mimeData()
    if data is None or not data.hasFormat(MIME_TYPE):
        return None
    try:
        text = bytes(data.data(MIME_TYPE).data()).decode("utf-8")
    except UnicodeDecodeError as error:
        raise LabError([Problem(f"the clipboard's vtopo data is not UTF-8 text (byte {error.start})")]) from None
    return Fragment.loads(text)
