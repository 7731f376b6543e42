"""The inspector dock: edits the selected node, link or annotation (or the lab). Every change is an undo step."""
from __future__ import annotations

from functools import partial
from typing import Any, Callable

from PySide6.QtCore import QSize, Qt, QTimer, SignalInstance
from PySide6.QtWidgets import (QComboBox, QFormLayout, QGridLayout, QLabel, QLineEdit, QPushButton, QScrollArea, QSizePolicy,
                               QStackedWidget, QVBoxLayout, QWidget)

from vtopo.gui.document.editor import ALIGN_MODES, Editor
from vtopo.gui.panels.address_pool import AddressPoolEditor
from vtopo.gui.panels.interface_table import InterfaceTable
from vtopo.gui.panels.leases import LeasesBox
from vtopo.gui.panels.link_form import LinkForm
from vtopo.gui.panels.sites_editor import site_choices
from vtopo.gui.panels.machine import MachineBox
from vtopo.gui.panels.port_vlans_table import PortVlansEditor
from vtopo.gui.panels.setting_editors import FieldEditor, LinesEdit, TextFileEditor, editor_for, mark_invalid
from vtopo.gui.canvas.states import NodeState
from vtopo.gui.style.wheel_guard import guard_wheel
from vtopo.kinds.contract import Role, generated_settings_of
from vtopo.kinds.leases import leases_in
from vtopo.kinds.settings import setting_fields
from vtopo.model.problems import LabError


VM_BACKEND_CHOICES = {"": "automatically", "libvirt": "as libvirt domains", "qemu": "as QEMU processes"}


def top_form(page: QWidget) -> QFormLayout:
    """A form whose rows stay together at the top of a tall page."""
    outer = QVBoxLayout(page)
    form = QFormLayout()
    outer.addLayout(form)
    outer.addStretch(1)
    return form


class NodeForm(QWidget):
    """Name, then every setting the node's kind declares. Settings equal to their default are not stored."""

    def __init__(self, editor: Editor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self.node_id = ""
        self._kind_name = ""
        self.name = QLineEdit()
        self.name.editingFinished.connect(self._rename)
        self.name.textEdited.connect(self._check_name)
        self.site = QComboBox()
        self.site.setToolTip("The machine the node runs on: this one, or a site the lab names (docs/sites.md)")
        self.site.activated.connect(self._commit_site)
        self.kind = QLabel()
        self.kind.setWordWrap(True)
        self.kind.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # wrap, never widen
        self.fields: dict[str, FieldEditor] = {}
        self._settings_host = QWidget()
        self._kept: dict[str, tuple[QWidget, dict[str, FieldEditor], str]] = {}  # by kind: its settings' form and
        # the kind's text, built once
        self.startup = LinesEdit()
        self.startup.setPlaceholderText("e.g. ip route add 10.9.0.0/24 via 10.0.0.2")
        self.startup.setToolTip("Shell commands run inside the node, one per line, once the lab is deployed; their "
                                "output goes to the deploy log. Deploy asks before it runs them.")
        self.startup.editing_finished.connect(self._commit_startup)
        self.interfaces = InterfaceTable(editor)
        self.leases = LeasesBox()
        self.status_details: Callable[[], dict[str, str]] = dict  # by node name, as the agent last told them
        self.machine = MachineBox()
        self._layout = QVBoxLayout(self)
        head = QFormLayout()
        head.addRow("Name", self.name)
        head.addRow("Kind", self.kind)
        head.addRow("Site", self.site)
        self._site_row = head.rowCount() - 1
        self._head = head
        self._layout.addLayout(head)
        self._layout.addWidget(self._settings_host)
        self._layout.addWidget(QLabel("Startup commands (one per line)"))
        self._layout.addWidget(self.startup)
        self._layout.addWidget(QLabel("Interfaces"))
        self._layout.addWidget(self.interfaces)
        self._layout.addWidget(self.leases)
        self._layout.addWidget(self.machine)
        self._layout.addStretch(1)

    def show_node(self, node_id: str) -> None:
        node = self._editor.topology.nodes[node_id]
        self.node_id = node_id
        if node.kind != self._kind_name:
            self._show_fields(node.kind)
        if not self.name.hasFocus() or self.name.text() == node.name:
            self.name.setText(node.name)
            mark_invalid(self.name, "")
        for name, field_editor in self.fields.items():
            field_editor.set_value(node.settings.get(name, field_editor.field.default))
        if not self.startup.hasFocus():
            self.startup.setPlainText("\n".join(node.startup_commands))
        self._show_site(node.site)
        state = self._editor.scene.nodes[node_id].state
        details = self.status_details()
        every_lease = [lease for detail in details.values() for lease in leases_in(detail) or []]
        self.interfaces.show_node(node_id, state.value, [lease for lease in every_lease if lease.client == node.name])
        self.leases.show_leases(leases_in(details.get(node.name, "")))
        kind = self._editor.registry.get(node.kind)
        runs_a_machine = kind is not None and kind.role is Role.MACHINE and state is NodeState.RUNNING
        self.machine.show_machine(self._editor.topology.name, node.name if runs_a_machine else None)

    def _show_fields(self, kind_name: str) -> None:
        """The form of the kind's settings in place of the one shown."""
        self._kind_name = kind_name
        self._settings_host.hide()
        if kind_name not in self._kept:
            self._kept[kind_name] = self._build_fields(kind_name)
        self._settings_host, self.fields, kind_text = self._kept[kind_name]
        self.kind.setText(kind_text)
        self._settings_host.show()

    def _build_fields(self, kind_name: str) -> tuple[QWidget, dict[str, FieldEditor], str]:
        host = QWidget()
        form = QFormLayout(host)
        form.setContentsMargins(0, 0, 0, 0)
        fields: dict[str, FieldEditor] = {}
        kind = self._editor.registry.get(kind_name)
        if kind is None:
            kind_text = f"{kind_name} (not installed: its settings cannot be edited)"
        else:
            kind_text = f"{kind.label}: {kind.description}"
            for spec in setting_fields(kind.settings_type):
                field_editor = PortVlansEditor(spec) if spec.info.port_vlans else editor_for(spec)
                field_editor.committed.connect(self._commit_settings)
                if isinstance(field_editor, TextFileEditor):
                    field_editor.generated = partial(self._generated, spec.name)
                if isinstance(field_editor, PortVlansEditor):
                    field_editor.shown_switch = self._shown_switch
                label = QLabel(spec.info.label)
                label.setToolTip(spec.info.help)
                if isinstance(field_editor, (TextFileEditor, PortVlansEditor)):  # as wide as the form: a
                    # configuration to read, a row per port
                    form.addRow(label)
                    form.addRow(field_editor.widget)
                else:
                    form.addRow(label, field_editor.widget)
                fields[spec.name] = field_editor
            guard_wheel(host)
        self._layout.insertWidget(1, host)
        return host, fields, kind_text

    def _show_site(self, site: str) -> None:
        """The lab's sites to choose from, the node's chosen; the row only when the lab names sites."""
        sites = self._editor.topology.sites
        self._head.setRowVisible(self._site_row, bool(sites))
        self.site.clear()
        for label, name in site_choices(self._editor.topology):
            self.site.addItem(label, name)
        if site and self.site.findData(site) < 0:
            self.site.addItem(f"{site} (not among the lab's sites)", site)
        self.site.setCurrentIndex(max(self.site.findData(site), 0))

    def _commit_site(self) -> None:
        if self.node_id in self._editor.topology.nodes:
            self._editor.set_node_site(self.node_id, str(self.site.currentData()))

    def _shown_switch(self) -> tuple[str, list[str]]:
        """The node shown, and its linked ports."""
        return self.node_id, [end.port for link in self._editor.topology.links_of(self.node_id) for end in link.ends
                              if end.node == self.node_id]

    def _generated(self, setting: str) -> str:
        """What vtopo generates for an empty text setting of the shown node, from the lab as it is now."""
        from vtopo.compile.resolve import resolve
        from vtopo.lab import registry

        try:
            lab = resolve(self._editor.topology.copy(), registry()).valid().lab
        except LabError:
            return "! vtopo writes this configuration once the lab has no errors (see the Problems panel)\n"
        node = lab.nodes.get(self.node_id)
        return generated_settings_of(node).get(setting, "") if node is not None else ""

    def _check_name(self, text: str) -> None:
        mark_invalid(self.name, self._editor.name_error(self.node_id, text.strip()))

    def _rename(self) -> None:
        if self.node_id not in self._editor.topology.nodes:
            return
        error = self._editor.rename_node(self.node_id, self.name.text().strip())
        mark_invalid(self.name, error)

    def _commit_settings(self) -> None:
        node = self._editor.topology.nodes.get(self.node_id)
        if node is None:
            return
        settings: dict[str, Any] = dict(node.settings)
        for name, field_editor in self.fields.items():
            value = field_editor.value()
            if value == field_editor.field.default:
                settings.pop(name, None)
            else:
                settings[name] = value
        self._editor.set_node_settings(self.node_id, settings)

    def _commit_startup(self) -> None:
        if self.node_id in self._editor.topology.nodes:
            self._editor.set_startup_commands(self.node_id, self.startup.lines())


class AnnotationForm(QWidget):
    def __init__(self, editor: Editor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self.annotation_id = ""
        self.shape = QLabel()
        self.text = LinesEdit()
        self.text.setLineWrapMode(LinesEdit.LineWrapMode.WidgetWidth)
        self.text.show_lines(8)
        self.text.editing_finished.connect(self._commit)
        layout = top_form(self)
        layout.addRow("Shape", self.shape)
        layout.addRow("Text", self.text)

    def show_annotation(self, annotation_id: str) -> None:
        annotation = self._editor.topology.annotations[annotation_id]
        self.annotation_id = annotation_id
        self.shape.setText({"note": "Note", "rect": "Rectangle"}.get(annotation.shape, annotation.shape))
        if self.text.toPlainText() != annotation.text:
            self.text.setPlainText(annotation.text)

    def _commit(self) -> None:
        if self.annotation_id in self._editor.topology.annotations:
            self._editor.set_annotation_text(self.annotation_id, self.text.toPlainText())


class LabForm(QWidget):
    """Shown when nothing is selected: the lab's name, teaching notes, how its VMs run and its address pool."""

    def __init__(self, editor: Editor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self.name = QLineEdit()
        self.name.editingFinished.connect(lambda: self._editor.update_lab(name=self.name.text().strip()))
        self.notes = LinesEdit()
        self.notes.show_lines(12)
        self.notes.editing_finished.connect(lambda: self._editor.update_lab(notes=self.notes.toPlainText()))
        self.vm_backend = QComboBox()
        for backend, text in VM_BACKEND_CHOICES.items():
            self.vm_backend.addItem(text, backend)
        self.vm_backend.setToolTip("How the lab's VMs run on deploy. Automatic: as libvirt domains (seen in virsh "
                                   "and virt-manager) when libvirtd answers, otherwise as QEMU processes.")
        self.vm_backend.activated.connect(
            lambda index: self._editor.update_lab(vm_backend=self.vm_backend.itemData(index)))
        guard_wheel(self, [self.vm_backend])
        self.addressing = AddressPoolEditor(editor)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        layout = top_form(self)
        layout.addRow("Lab", self.name)
        layout.addRow("Notes", self.notes)
        layout.addRow("VMs run", self.vm_backend)
        layout.addRow("Addresses", self.addressing)
        layout.addRow("", self.summary)

    def show_lab(self) -> None:
        topology = self._editor.topology
        if not self.name.hasFocus():
            self.name.setText(topology.name)
        if not self.notes.hasFocus() and self.notes.toPlainText() != topology.notes:
            self.notes.setPlainText(topology.notes)
        self.vm_backend.setCurrentIndex(max(self.vm_backend.findData(topology.vm_backend), 0))
        self.addressing.show_pool(topology.addressing)
        self.summary.setText(f"{len(topology.nodes)} nodes, {len(topology.links)} links. "
                             "Select a node, link or note to edit it.")


class SelectionForm(QWidget):
    """Shown for a multi-selection: what is selected, and buttons to align or distribute it (one undo step each)."""

    def __init__(self, editor: Editor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        grid = QGridLayout()
        self.buttons: dict[str, QPushButton] = {}
        for index, (mode, text) in enumerate(ALIGN_MODES.items()):
            button = QPushButton(text)
            button.clicked.connect(lambda checked=False, m=mode: editor.align(m))
            grid.addWidget(button, index // 2, index % 2)
            self.buttons[mode] = button
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(grid)
        layout.addStretch(1)


class PageStack(QStackedWidget):
    """A stack of forms as tall as the one it shows, where a QStackedWidget is as tall as its tallest: a short form
    scrolled down past its end would show nothing."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.currentChanged.connect(self.updateGeometry)  # the scroll area sizes it for the new page

    def _page(self) -> QWidget:
        return self.currentWidget() or QWidget()

    def sizeHint(self) -> QSize:
        return self._page().sizeHint()

    def minimumSizeHint(self) -> QSize:
        return self._page().minimumSizeHint()

    def heightForWidth(self, width: int) -> int:
        page = self._page()
        return page.heightForWidth(width) if page.hasHeightForWidth() else page.sizeHint().height()


class Inspector(QScrollArea):
    """Shows the form for the single selected item, and follows the model (undo included)."""

    def __init__(self, editor: Editor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._editor = editor
        self.stack = PageStack()
        self.lab_form = LabForm(editor)
        self.node_form = NodeForm(editor)
        self.link_form = LinkForm(editor)
        self.annotation_form = AnnotationForm(editor)
        self.multiple = SelectionForm(editor)
        for page in (self.lab_form, self.node_form, self.link_form, self.annotation_form, self.multiple):
            self.stack.addWidget(page)
        self.setWidget(self.stack)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._shown: tuple[str, ...] = ()  # what the form shows: the selection it was opened for
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(0)
        self._refresh_timer.timeout.connect(self.refresh)
        editor.model_changed.connect(self._refresh_timer.start)
        editor.topology_replaced.connect(self._refresh_timer.start)
        editor.scene.selectionChanged.connect(self._refresh_timer.start)
        editor.scene.press_released.connect(self._refresh_timer.start)

    def follow_states(self, states_changed: SignalInstance) -> None:
        """Refresh when the deployed nodes' states change: a VM that starts running shows its Machine box."""
        states_changed.connect(self._refresh_timer.start)
        self.refresh()

    def refresh(self) -> None:
        """Show the selection's form; not while the mouse holds nodes it pressed on, which it may drag: the drag would
        wait for the form."""
        scene = self._editor.scene
        if scene.pressing_nodes:
            return  # press_released refreshes
        nodes, links = scene.selected_node_ids(), scene.selected_link_ids()
        annotations = scene.selected_annotation_ids()
        if (shown := (*nodes, *links, *annotations)) != self._shown:
            self._shown = shown
            self.verticalScrollBar().setValue(0)  # another item's form starts at its top
        count = len(nodes) + len(links) + len(annotations)
        if count == 0:
            self.lab_form.show_lab()
            self.stack.setCurrentWidget(self.lab_form)
        elif count > 1:
            self.multiple.summary.setText(f"{len(nodes)} nodes, {len(links)} links and {len(annotations)} notes "
                                          "selected.")
            self.stack.setCurrentWidget(self.multiple)
        elif nodes:
            self.node_form.show_node(nodes[0])
            self.stack.setCurrentWidget(self.node_form)
        elif links:
            self.link_form.show_link(links[0])
            self.stack.setCurrentWidget(self.link_form)
        else:
            self.annotation_form.show_annotation(annotations[0])
            self.stack.setCurrentWidget(self.annotation_form)
