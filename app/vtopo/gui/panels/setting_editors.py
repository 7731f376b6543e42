"""One editor widget per setting type: bool, choices, int, float, str, list[str], dict[str, str]."""
from __future__ import annotations

import typing
from typing import Any, Callable

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QFocusEvent, QFontDatabase, QKeyEvent
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QPlainTextEdit, QPushButton, QSpinBox,
                               QVBoxLayout, QWidget)

from vtopo.kinds.settings import SettingField

INVALID_TINT = (214, 57, 57, 70)
"""The red of a field that holds what cannot be taken, as red, green, blue and alpha."""
INVALID_STYLE = f"background-color: rgba({', '.join(map(str, INVALID_TINT))});"
INT_LIMIT = 2**31 - 1


def mark_invalid(widget: QWidget, error: str) -> None:
    """Tint a field red with the reason as its tooltip, or clear both."""
    widget.setStyleSheet(INVALID_STYLE if error else "")
    widget.setToolTip(error)
    widget.setProperty("invalid", bool(error))


LIST_LINES = 8


class LinesEdit(QPlainTextEdit):
    """A multi-line field that reports editing finished on focus out or Ctrl+Enter, like QLineEdit does."""

    editing_finished = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTabChangesFocus(True)
        self._lines = 4
        self.show_lines(4)

    def show_lines(self, lines: int) -> None:
        """As tall as `lines` lines of its font, whichever font it gets later (presentation mode's, larger)."""
        self._lines = lines
        self.setFixedHeight(self.fontMetrics().lineSpacing() * lines + 12)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self.show_lines(self._lines)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self.editing_finished.emit()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        if ctrl and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.editing_finished.emit()
            return
        super().keyPressEvent(event)

    def lines(self) -> list[str]:
        return [line.strip() for line in self.toPlainText().splitlines() if line.strip()]


class FieldEditor(QObject):
    """Wraps one widget: `committed` fires when the user is done changing the value."""

    committed = Signal()

    def __init__(self, field: SettingField, widget: QWidget) -> None:
        super().__init__(widget)
        self.field = field
        self.widget = widget
        widget.setToolTip(field.info.help)
        self._setting = False

    def value(self) -> Any:
        raise NotImplementedError

    def _show(self, value: Any) -> None:
        raise NotImplementedError

    def set_value(self, value: Any) -> None:
        self._setting = True
        try:
            self._show(value)
        finally:
            self._setting = False

    def error(self) -> str:
        return ""

    def _commit(self, *_args: object) -> None:
        if self._setting:
            return
        error = self.error()
        mark_invalid(self.widget, error)
        if not error:
            self.widget.setToolTip(self.field.info.help)
            self.committed.emit()


class BoolEditor(FieldEditor):
    widget: QCheckBox

    def __init__(self, field: SettingField) -> None:
        super().__init__(field, QCheckBox())
        self.widget.toggled.connect(self._commit)

    def value(self) -> bool:
        return self.widget.isChecked()

    def _show(self, value: Any) -> None:
        self.widget.setChecked(bool(value))


class ChoiceEditor(FieldEditor):
    widget: QComboBox

    def __init__(self, field: SettingField) -> None:
        super().__init__(field, QComboBox())
        self.widget.addItems(list(field.info.choices))
        self.widget.currentIndexChanged.connect(self._commit)

    def value(self) -> str:
        return self.widget.currentText()

    def _show(self, value: Any) -> None:
        index = self.widget.findText(str(value))
        self.widget.setCurrentIndex(index if index >= 0 else self.widget.findText(str(self.field.default)))


class NumberEditor(FieldEditor):
    widget: QSpinBox | QDoubleSpinBox

    def __init__(self, field: SettingField) -> None:
        is_int = field.type is int
        spin: QSpinBox | QDoubleSpinBox = QSpinBox() if is_int else QDoubleSpinBox()
        low = field.info.minimum if field.info.minimum is not None else -INT_LIMIT
        high = field.info.maximum if field.info.maximum is not None else INT_LIMIT
        if isinstance(spin, QSpinBox):
            spin.setRange(int(low), int(min(high, INT_LIMIT)))
        else:
            spin.setDecimals(2)
            spin.setRange(low, high)
        spin.setKeyboardTracking(False)
        super().__init__(field, spin)
        spin.valueChanged.connect(self._commit)

    def value(self) -> int | float:
        return self.widget.value()

    def _show(self, value: Any) -> None:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        self.widget.setValue(value if ok else self.field.default)


class TextEditor(FieldEditor):
    widget: QLineEdit

    def __init__(self, field: SettingField) -> None:
        super().__init__(field, QLineEdit())
        self.widget.setPlaceholderText(str(field.default) if field.default else "")
        self.widget.editingFinished.connect(self._commit)

    def value(self) -> str:
        return self.widget.text().strip()

    def _show(self, value: Any) -> None:
        self.widget.setText(str(value))


class ListEditor(FieldEditor):
    """list[str]: one item per line."""

    widget: LinesEdit

    def __init__(self, field: SettingField) -> None:
        super().__init__(field, LinesEdit())
        self.widget.setPlaceholderText("one per line")
        self.widget.setLineWrapMode(LinesEdit.LineWrapMode.NoWrap)  # a rule or route is never broken mid-line
        self.widget.show_lines(LIST_LINES)
        self.widget.editing_finished.connect(self._commit)

    def value(self) -> list[str]:
        return self.widget.lines()

    def _show(self, value: Any) -> None:
        self.widget.setPlainText("\n".join(str(v) for v in value) if isinstance(value, list) else "")


class MappingEditor(FieldEditor):
    """dict[str, str]: one "key = value" per line."""

    widget: LinesEdit

    def __init__(self, field: SettingField) -> None:
        super().__init__(field, LinesEdit())
        self.widget.setPlaceholderText("key = value, one per line")
        self.widget.editing_finished.connect(self._commit)
        self.widget.textChanged.connect(lambda: mark_invalid(self.widget, self.error()))

    def value(self) -> dict[str, str]:
        pairs = (line.partition("=") for line in self.widget.lines())
        return {key.strip(): value.strip() for key, _, value in pairs}

    def error(self) -> str:
        bad = [line for line in self.widget.lines() if "=" not in line or not line.partition("=")[0].strip()]
        return f"write key = value, not {bad[0]!r}" if bad else ""

    def _show(self, value: Any) -> None:
        lines = [f"{k} = {v}" for k, v in value.items()] if isinstance(value, dict) else []
        self.widget.setPlainText("\n".join(lines))


TEXT_LINES = 16


class TextFileEditor(FieldEditor):
    """A text of many lines kept verbatim (a router's frr.conf). Left empty, it shows what vtopo generates in its place
    (`generated`, asked when shown), read-only; "Edit configuration" makes that the node's own text."""

    def __init__(self, field: SettingField) -> None:
        super().__init__(field, QWidget())
        self.generated: Callable[[], str] = lambda: ""
        self.text = LinesEdit()
        self.text.setLineWrapMode(LinesEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.show_lines(TEXT_LINES)
        self.text.setTabChangesFocus(False)  # indentation is part of the text
        self.text.editing_finished.connect(self._commit)
        self.edit = QPushButton("Edit configuration")
        self.edit.setToolTip("Make the generated text this node's own, to change as you like (one undo step)")
        self.edit.clicked.connect(self._make_own)
        layout = QVBoxLayout(self.widget)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.text)
        layout.addWidget(self.edit)
        self._own = False

    def value(self) -> str:
        if not self._own:
            return ""
        text = self.text.toPlainText()
        return text if text.strip() else ""  # emptied: back to the generated text

    def _show(self, value: Any) -> None:
        self._own = bool(value)
        text = str(value) if self._own else self.generated()
        if self.text.toPlainText() != text and not (self._own and self.text.hasFocus()):
            self.text.setPlainText(text)
        self.text.setReadOnly(not self._own)
        self.edit.setVisible(not self._own)

    def _make_own(self) -> None:
        self._own = True
        self.text.setPlainText(self.generated())
        self._commit()


def editor_for(field: SettingField) -> FieldEditor:
    origin = typing.get_origin(field.type)
    factories: list[tuple[Callable[[], bool], Callable[[SettingField], FieldEditor]]] = [
        (lambda: field.type is bool, BoolEditor),
        (lambda: bool(field.info.choices), ChoiceEditor),
        (lambda: field.type in (int, float), NumberEditor),
        (lambda: field.type is str and field.info.multiline, TextFileEditor),
        (lambda: field.type is str, TextEditor),
        (lambda: origin is list, ListEditor),
        (lambda: origin is dict, MappingEditor),
    ]
    for applies, factory in factories:
        if applies():
            return factory(field)
    raise TypeError(f"no editor for setting {field.name} of type {field.type!r}")
