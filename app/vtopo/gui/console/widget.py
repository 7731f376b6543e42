"""A terminal widget: draws a pyte screen (monospace, colours, cursor) and sends keys to a pty process."""
from __future__ import annotations

import pyte
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (QClipboard, QColor, QFocusEvent, QFont, QFontDatabase, QFontMetricsF, QGuiApplication,
                           QKeyEvent, QMouseEvent, QPainter, QPaintEvent, QResizeEvent, QWheelEvent)
from PySide6.QtWidgets import QWidget

from vtopo.gui.console.keys import key_bytes, terminal_keeps
from vtopo.gui.console.pty_process import PtyProcess
from vtopo.gui.console.screen import TerminalScreen
from vtopo.gui.console.selection import Cell, Selection

DEFAULT_FOREGROUND = QColor("#d0d0d0")
DEFAULT_BACKGROUND = QColor("#101214")
NAMED_COLOURS = {
    "black": "#000000", "red": "#cd3131", "green": "#0dbc79", "brown": "#e5e510", "blue": "#2472c8",
    "magenta": "#bc3fbc", "cyan": "#11a8cd", "white": "#e5e5e5",
    "brightblack": "#666666", "brightred": "#f14c4c", "brightgreen": "#23d18b", "brightbrown": "#f5f543",
    "brightblue": "#3b8eea", "brightmagenta": "#d670d6", "bfightmagenta": "#d670d6",  # pyte's own spelling
    "brightcyan": "#29b8db", "brightwhite": "#ffffff",
}
INITIAL_SIZE = (80, 24)
SELECTION_COLOUR = QColor(90, 140, 230, 110)


def colour(name: str, default: QColor) -> QColor:
    """A pyte colour: a name of the 16 ANSI colours, six hex digits (256 colours, true colour), or "default"."""
    if name in NAMED_COLOURS:
        return QColor(NAMED_COLOURS[name])
    if len(name) == 6:
        parsed = QColor(f"#{name}")
        if parsed.isValid():
            return parsed
    return default


class TerminalWidget(QWidget):
    """One terminal session. The screen follows the widget's size; the process learns it through the pty."""

    finished = Signal(int)

    def __init__(self, argv: list[str], scale: float = 1.0, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.cell_width = self.cell_height = self._ascent = 1.0
        self._use_font(scale)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.setAttribute(Qt.WidgetAttribute.WA_InputMethodEnabled)
        columns, lines = INITIAL_SIZE
        self.screen_model = TerminalScreen(columns, lines, reply=lambda text: self.process.write(text.encode()))
        self._stream = pyte.ByteStream(self.screen_model)
        self.selection: Selection | None = None
        self.process = PtyProcess(argv, columns, lines, self)
        self.process.output.connect(self.feed)
        self.process.finished.connect(self._finished)

    def feed(self, data: bytes) -> None:
        self._stream.feed(data)
        self.selection = None  # the text under it may have changed
        self.update()

    def text(self) -> list[str]:
        """The screen's lines as shown, right-trimmed."""
        return [line.rstrip() for line in self.screen_model.display]

    def close_session(self) -> None:
        self.process.close()

    def _finished(self, code: int) -> None:
        self.feed(f"\r\n[exited with code {code}]".encode())
        self.finished.emit(code)

    # --------------------------------------------------------------------------------------- input

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            if key_bytes(event.key(), event.modifiers(), event.text()) and terminal_keeps(event.key(),
                                                                                         event.modifiers()):
                event.accept()  # Ctrl+Z, Ctrl+C, Tab… go to the program, not to the window's shortcuts
                return True
        return super().event(event)

    def focusNextPrevChild(self, next: bool) -> bool:
        return False  # Tab completes in the shell and in vtysh; it does not move the focus

    def paste(self, text: str) -> None:
        data = text.replace("\r\n", "\r").replace("\n", "\r")
        if self.screen_model.bracketed_paste:
            data = f"\x1b[200~{data}\x1b[201~"
        self.process.write(data.encode())

    def selected_text(self) -> str:
        return self.selection.text(self.screen_model.display) if self.selection else ""

    def copy(self) -> None:
        if text := self.selected_text():
            QGuiApplication.clipboard().setText(text)

    def _cell_at(self, point: QPointF) -> Cell:
        """The cell under a point; a point past a cell's middle selects from the next one."""
        line = min(self.screen_model.lines - 1, max(0, int(point.y() // self.cell_height)))
        column = min(self.screen_model.columns, max(0, round(point.x() / self.cell_width)))
        return line, column

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            cell = self._cell_at(event.position())
            self.selection = Selection(cell, cell)
            self.update()
        elif event.button() == Qt.MouseButton.MiddleButton:
            self.paste(QGuiApplication.clipboard().text(QClipboard.Mode.Selection))
        self.setFocus()
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if self.selection is not None and event.buttons() & Qt.MouseButton.LeftButton:
            self.selection.end = self._cell_at(event.position())
            self.update()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        """As in xterm, what is selected is at once the primary selection (a middle click pastes it)."""
        if self.selection is not None and event.button() == Qt.MouseButton.LeftButton:
            if self.selection.empty:
                self.selection = None
            elif text := self.selected_text():
                clipboard = QGuiApplication.clipboard()
                if clipboard.supportsSelection():
                    clipboard.setText(text, QClipboard.Mode.Selection)
            self.update()

    def wheelEvent(self, event: QWheelEvent) -> None:
        """The wheel pages through the scrollback (the program's own screen, in vim or less, has none)."""
        steps = event.angleDelta().y()
        if steps:
            self._page(back=steps > 0)
        event.accept()

    def _page(self, back: bool) -> None:
        if back:
            self.screen_model.prev_page()
        else:
            self.screen_model.next_page()
        self.update()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        shift_only = event.modifiers() == Qt.KeyboardModifier.ShiftModifier
        if shift_only and event.key() in (Qt.Key.Key_PageUp, Qt.Key.Key_PageDown):
            self._page(back=event.key() == Qt.Key.Key_PageUp)
            return
        if _is_ctrl_shift(event, Qt.Key.Key_C):
            self.copy()  # Ctrl+C stays the program's interrupt
            return
        if (shift_only and event.key() == Qt.Key.Key_Insert) or _is_ctrl_shift(event, Qt.Key.Key_V):
            self.paste(QGuiApplication.clipboard().text())  # Ctrl+V stays the program's (vim's block selection)
            return
        data = key_bytes(event.key(), event.modifiers(), event.text(), self.screen_model.application_cursor)
        if data:
            self.process.write(data)
            event.accept()
        else:
            super().keyPressEvent(event)

    def focusInEvent(self, event: QFocusEvent) -> None:
        self.update()
        super().focusInEvent(event)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        self.update()
        super().focusOutEvent(event)

    # --------------------------------------------------------------------------------------- size and paint

    def set_scale(self, scale: float) -> None:
        """The system's fixed font `scale` times as large (presentation mode); the screen keeps the widget's size,
        in fewer, larger cells."""
        self._use_font(scale)
        self._fit_screen()
        self.update()

    def _use_font(self, scale: float) -> None:
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QFont.StyleHint.Monospace)
        font.setPointSizeF(font.pointSizeF() * scale)
        font.setKerning(False)
        self.setFont(font)
        metrics = QFontMetricsF(font)
        self.cell_width = max(1.0, metrics.horizontalAdvance("M"))  # fractional: a run of n cells is n advances
        self.cell_height = max(1.0, metrics.height())
        self._ascent = metrics.ascent()
        self.setMinimumSize(round(self.cell_width * 20), round(self.cell_height * 4))

    def _fit_screen(self) -> None:
        columns = max(2, int(self.width() // self.cell_width))
        lines = max(1, int(self.height() // self.cell_height))
        if (columns, lines) != (self.screen_model.columns, self.screen_model.lines):
            self.screen_model.resize(lines, columns)
            self.process.resize(columns, lines)

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._fit_screen()
        super().resizeEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), DEFAULT_BACKGROUND)
        bold = QFont(self.font())
        bold.setBold(True)
        first = max(0, int(event.rect().top() // self.cell_height))
        last = min(self.screen_model.lines - 1, int(event.rect().bottom() // self.cell_height))
        for y in range(first, last + 1):
            self._paint_line(painter, y, bold)
        if self.selection is not None:
            for line, start, stop in self.selection.spans(self.screen_model.columns):
                painter.fillRect(QRectF(start * self.cell_width, line * self.cell_height,
                                        (stop - start) * self.cell_width, self.cell_height), SELECTION_COLOUR)
        self._paint_cursor(painter)
        painter.end()

    def _paint_line(self, painter: QPainter, y: int, bold: QFont) -> None:
        """Runs of cells with the same attributes, each drawn with one call."""
        line = self.screen_model.buffer[y]
        x = 0
        while x < self.screen_model.columns:
            style = line[x]
            start, text = x, []
            while x < self.screen_model.columns and _same_style(line[x], style):
                text.append(line[x].data)
                x += 1
            foreground = colour(style.fg, DEFAULT_FOREGROUND)
            background = colour(style.bg, DEFAULT_BACKGROUND)
            if style.reverse:
                foreground, background = background, foreground
            cells = QRectF(start * self.cell_width, y * self.cell_height, (x - start) * self.cell_width,
                           self.cell_height)
            if background != DEFAULT_BACKGROUND:
                painter.fillRect(cells, background)
            content = "".join(text)
            if content.strip():
                painter.setFont(bold if style.bold else self.font())
                painter.setPen(foreground)
                painter.drawText(QPointF(cells.left(), cells.top() + self._ascent), content)
            if style.underscore:
                painter.fillRect(QRectF(cells.left(), cells.bottom() - 1, cells.width(), 1), foreground)

    def _paint_cursor(self, painter: QPainter) -> None:
        cursor = self.screen_model.cursor
        if cursor.hidden or not self.process.running or self.screen_model.scrolled_back:
            return
        cell = QRectF(cursor.x * self.cell_width, cursor.y * self.cell_height, self.cell_width, self.cell_height)
        if self.hasFocus():
            painter.fillRect(cell, DEFAULT_FOREGROUND)
            under = self.screen_model.buffer[cursor.y][cursor.x].data
            if under.strip():
                painter.setPen(DEFAULT_BACKGROUND)
                painter.drawText(QPointF(cell.left(), cell.top() + self._ascent), under)
        else:
            painter.setPen(DEFAULT_FOREGROUND)
            painter.drawRect(cell.adjusted(0, 0, -1, -1))


def _is_ctrl_shift(event: QKeyEvent, key: Qt.Key) -> bool:
    both = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    return event.modifiers() == both and event.key() == key


def _same_style(a: pyte.screens.Char, b: pyte.screens.Char) -> bool:
    return (a.fg, a.bg, a.bold, a.reverse, a.underscore) == (b.fg, b.bg, b.bold, b.reverse, b.underscore)
