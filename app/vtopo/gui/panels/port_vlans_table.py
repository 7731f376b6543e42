"""The inspector's VLANs of a switch, a row per port (its linked ports, and any other its setting lists): a model of
the ports' choices that a table view shows, painting only the rows in sight, and a delegate whose controls edit one
cell at a time. A bridge of 1,000 ports is a thousand rows of data, not a thousand rows of widgets."""
from __future__ import annotations

import dataclasses
from collections.abc import Collection
from typing import Any, Callable

from PySide6.QtCore import (QAbstractItemModel, QModelIndex, QObject, QPersistentModelIndex, Qt,
                            QTimer, Signal)
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHeaderView, QLabel, QLineEdit, QSpinBox,
                               QStyledItemDelegate, QStyleOptionViewItem, QVBoxLayout, QWidget)

from vtopo.gui.panels.port_vlans import (MODE_HELP, NATIVE_HELP, NOT_SET, PLACEHOLDERS, VLANS_HELP, MODES, PortChoice,
                                         mode_box, native_box, natural_order, parsed_port)
from vtopo.gui.panels.setting_editors import INVALID_TINT, FieldEditor, mark_invalid
from vtopo.gui.tables import Index, RowsModel, ShortTable
from vtopo.kinds.settings import SettingField

COLUMNS = ("Mode", "VLANs", "Native VLAN")  # each row's header names its port
MODE, VLANS, NATIVE = range(len(COLUMNS))
COLUMN_HELP = (MODE_HELP, VLANS_HELP, NATIVE_HELP)
Role = Qt.ItemDataRole


class PortVlansModel(RowsModel):
    """The ports' choices, as the setting last shown holds them or as the user changed them since. `edited` fires
    when a change leaves its port's choice valid, and value() is then the setting with it. An invalid choice (a mode
    whose VLANs are still to be typed, VLANs that cannot be taken) stays in its row, red, while the port's setting
    stays as it was: shown again unchanged, the switch keeps it."""

    edited = Signal()
    columns = COLUMNS
    vlans_wanted = Signal(QModelIndex)  # a port was given a mode before any VLANs: its VLANs cell comes next

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.ports: list[str] = []
        self._shown: dict[str, str] = {}  # the setting as last shown
        self._choices: dict[int, PortChoice] = {}  # by row, those read or changed since
        self._value: dict[str, str] = {}
        self._switch = ""
        self._drafts: dict[str, tuple[PortChoice, str | None]] = {}  # the invalid choices, each with its port's
        # setting as it was when the user made it

    def show_ports(self, switch: str, ports: list[str], vlans: dict[str, str]) -> None:
        """The `switch`'s linked `ports` and those its setting `vlans` lists, each with its VLANs (read when Qt asks
        for the rows in sight); a text the controls cannot show is kept as written while its port is not changed."""
        if switch != self._switch:
            self._switch, self._drafts = switch, {}
        self._drafts = {port: draft for port, draft in self._drafts.items() if draft[1] == vlans.get(port)}
        ports = sorted({*ports, *vlans}, key=natural_order)
        self._shown, self._choices, self._value = dict(vlans), {}, dict(vlans)
        if ports != self.ports:
            self.beginResetModel()
            self.ports = ports
            self.endResetModel()
        elif ports:
            self.dataChanged.emit(self.index(0, MODE), self.index(len(ports) - 1, NATIVE))

    def choice(self, row: int) -> PortChoice:
        """The port's choice: the user's since the setting was shown, or the setting's."""
        if row not in self._choices:
            port = self.ports[row]
            draft = self._drafts.get(port)
            self._choices[row] = draft[0] if draft is not None else PortChoice.of(parsed_port(self._shown.get(port)))
        return self._choices[row]

    def value(self) -> dict[str, str]:
        return dict(self._value)

    def not_set(self, row: int) -> str:
        """What the port in `row` does when not set."""
        return NOT_SET[lists_others(self._shown, self.ports[row])]

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.ports)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Role.DisplayRole) -> Any:
        if orientation is Qt.Orientation.Vertical and role == Role.DisplayRole:
            return self.ports[section]
        if orientation is Qt.Orientation.Horizontal and role == Role.ToolTipRole:
            return COLUMN_HELP[section]
        return super().headerData(section, orientation, role)

    def flags(self, index: Index) -> Qt.ItemFlag:
        """A port's VLANs once it has a mode, its native VLAN once a trunk: disabled before, which Tab passes by."""
        mode = self.choice(index.row()).mode
        if index.column() == MODE or (index.column() == VLANS and mode) or (index.column() == NATIVE
                                                                           and mode == "trunk"):
            return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEditable
        return Qt.ItemFlag.NoItemFlags

    def data(self, index: Index, role: int = Role.DisplayRole) -> Any:
        row, column = index.row(), index.column()
        choice = self.choice(row)
        if role == Role.DisplayRole:
            return (MODES[choice.mode] if choice.mode else self.not_set(row), choice.vlans,
                    (str(choice.native) if choice.native else "none") if choice.mode == "trunk" else "")[column]
        if role == Role.EditRole:
            return (choice.mode, choice.vlans, choice.native)[column]
        invalid = column == VLANS and bool(choice.error())
        if role == Role.ToolTipRole:
            return self._error(row) if invalid else COLUMN_HELP[column]
        if role == Role.BackgroundRole and invalid:
            return QColor(*INVALID_TINT)
        return None

    def setData(self, index: Index, value: Any, role: int = Role.EditRole) -> bool:
        row, column = index.row(), index.column()
        if role != Role.EditRole or not index.isValid():
            return False
        choice = self.choice(row)
        changed = (dataclasses.replace(choice, mode=str(value)) if column == MODE else
                   dataclasses.replace(choice, vlans=str(value).strip()) if column == VLANS else
                   dataclasses.replace(choice, native=int(value)))
        if changed == choice:
            return True
        self._choices[row] = changed
        self.dataChanged.emit(self.index(row, MODE), self.index(row, NATIVE))
        port = self.ports[row]
        if changed.error():
            self._drafts[port] = (changed, self._value.get(port))
            if column == MODE and not changed.vlans:
                self.vlans_wanted.emit(self.index(row, VLANS))
            return True
        self._drafts.pop(port, None)
        vlans = changed.port_vlans()
        if vlans is None:
            self._value.pop(port, None)
        else:
            self._value[port] = str(vlans)
        self.edited.emit()
        return True

    def _error(self, row: int) -> str:
        return f"{self.ports[row]}: {self.choice(row).error()}"


def lists_others(listed: Collection[str], port: str) -> bool:
    """Whether the setting lists a port other than `port`."""
    return len(listed) > (port in listed)


class PortVlansDelegate(QStyledItemDelegate):
    """Edits a cell with the control for its column: the mode's list (taken as soon as chosen), the VLANs' field
    (red as soon as what is typed cannot be taken), the native VLAN's spin box."""

    def __init__(self, model: PortVlansModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._model = model

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: Index) -> QWidget:
        row, column = index.row(), index.column()
        if column == MODE:
            box = mode_box(self._model.not_set(row), parent)
            box.activated.connect(lambda: self._take(box))
            return box
        if column == NATIVE:
            return native_box(parent)
        field = QLineEdit(parent)
        mode = self._model.data(self._model.index(row, MODE), Role.EditRole)
        field.setPlaceholderText(PLACEHOLDERS[mode])
        field.textEdited.connect(lambda text: mark_invalid(field, PortChoice(mode, text).error()))
        return field

    def setEditorData(self, editor: QWidget, index: Index) -> None:
        value = index.data(Role.EditRole)
        if isinstance(editor, QComboBox):
            editor.setCurrentIndex(max(editor.findData(value), 0))
        elif isinstance(editor, QSpinBox):
            editor.setValue(int(value))
        elif isinstance(editor, QLineEdit):
            editor.setText(str(value))

    def setModelData(self, editor: QWidget, model: QAbstractItemModel, index: Index) -> None:
        if isinstance(editor, QComboBox):
            model.setData(index, editor.currentData())
        elif isinstance(editor, QSpinBox):
            editor.interpretText()
            model.setData(index, editor.value())
        elif isinstance(editor, QLineEdit):
            model.setData(index, editor.text())

    def _take(self, box: QComboBox) -> None:
        self.commitData.emit(box)
        self.closeEditor.emit(box, QStyledItemDelegate.EndEditHint.NoHint)


class PortVlansTable(QWidget):
    """The ports' table; a cell is edited by a double click, a click on the current cell, F2 or typing over it, Tab
    taking the next."""

    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = PortVlansModel(self)
        self.view = ShortTable()
        self.view.setModel(self.model)
        self.view.setItemDelegate(PortVlansDelegate(self.model, self.view))
        self.view.verticalHeader().show()
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                  | QAbstractItemView.EditTrigger.SelectedClicked
                                  | QAbstractItemView.EditTrigger.EditKeyPressed
                                  | QAbstractItemView.EditTrigger.AnyKeyPressed)
        self.view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        header = self.view.horizontalHeader()
        for column in (MODE, NATIVE):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(VLANS, QHeaderView.ResizeMode.Stretch)
        self._empty = QLabel("no port linked yet")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)
        layout.addWidget(self._empty)
        self.model.edited.connect(self.changed)
        self.model.vlans_wanted.connect(self._edit_later)
        self.model.modelReset.connect(self._fit)
        self._fit()


    def _edit_later(self, index: QModelIndex) -> None:
        """Edit the cell once the editor that asked for it has closed."""
        cell = QPersistentModelIndex(index)
        QTimer.singleShot(0, self, lambda: self._edit(cell))

    def _edit(self, cell: QPersistentModelIndex) -> None:
        if cell.isValid():
            index = self.model.index(cell.row(), cell.column())
            self.view.setCurrentIndex(index)
            self.view.edit(index)

    def _fit(self) -> None:
        ports = bool(self.model.ports)
        self.view.setVisible(ports)
        self._empty.setVisible(not ports)
        self.view.fit_height()


class PortVlansEditor(FieldEditor):
    """A switch kind's VLANs setting, as a table of its ports; `shown_switch` names the node shown and its linked
    ports."""

    widget: PortVlansTable

    def __init__(self, field: SettingField) -> None:
        super().__init__(field, PortVlansTable())
        self.widget.setToolTip("")  # each column has its own; the setting's help is on its label
        self.shown_switch: Callable[[], tuple[str, list[str]]] = lambda: ("", [])
        self.widget.changed.connect(self._commit)

    def value(self) -> dict[str, str]:
        return self.widget.model.value()

    def _show(self, value: Any) -> None:
        self.widget.model.show_ports(*self.shown_switch(), value if isinstance(value, dict) else {})
