"""One capture's tab: the live list with its display filter, pause, clear, save and Wireshark, and below it the
selected packet's layers as a tree and its bytes in hex."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QItemSelection, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPlainTextEdit, QPushButton,
                               QSizePolicy, QSplitter, QTableView, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from vtopo.capture import CaptureTarget, hex_dump, layers
from vtopo.capture.capture_process import Report
from vtopo.capture.pcapng import copy_head
from vtopo.capture.wireshark import Viewer, why_not
from vtopo.gui.capture.feed import CaptureFeed, TargetFinder
from vtopo.gui.capture.packets import MAC_COLUMNS, DisplayFilter, PacketTable
from vtopo.gui.workers import Worker


VIEWER_SETTLE_MS = 2000  # a Wireshark still running after this has found its display


class CaptureTab(QWidget):
    packet_chosen = Signal(str)  # the link id of this capture, when a packet is clicked
    started = Signal(object)  # the CaptureTarget

    def __init__(self, title: str, find_target: TargetFinder, bpf: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.target: CaptureTarget | None = None
        self._bpf = bpf
        self._wireshark: list[Viewer] = []
        self.table = PacketTable(self)
        self.shown = DisplayFilter(self.table)
        self.filter_box = QLineEdit(placeholderText="display filter: icmp, arp, 10.0.0.2, Hello, ttl 63 …")
        self.pause = QPushButton("Pause")
        self.pause.setCheckable(True)
        self.clear = QPushButton("Clear")
        self.save = QPushButton("Save as pcapng…")
        self.wireshark = QPushButton("Open in Wireshark")
        self.status = QLabel("starting tcpdump…")
        self._notice = ""  # the last thing the user's own action led to, kept beside the running count
        self.status.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)  # its text, which changes
        # with every batch, never resizes the dock (and so never repaints the window around it)
        self.view = QTableView()
        self.view.setModel(self.shown)
        self.view.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.view.verticalHeader().hide()
        self.view.horizontalHeader().setStretchLastSection(True)
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for column in MAC_COLUMNS:  # a MAC address whole, as its column is first shown
            self.view.setColumnWidth(column, self.view.fontMetrics().horizontalAdvance("ff:ff:ff:ff:ff:ff") + 16)
        self.layers = QTreeWidget()
        self.layers.setHeaderLabels(["Layer / field", "Value"])
        self.hex = QPlainTextEdit(readOnly=True)
        self.hex.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self._lay_out()
        self.save.setEnabled(False)
        self.wireshark.setEnabled(False)
        self.wireshark.setToolTip(why_not() or "Wireshark opens once the capture listens")
        self.filter_box.textChanged.connect(self.shown.set_text)
        self.clear.clicked.connect(self.table.clear)
        self.save.clicked.connect(self._save)
        self.wireshark.clicked.connect(self._open_wireshark)
        self.view.selectionModel().selectionChanged.connect(self._chosen)

        self.feed = CaptureFeed(find_target, bpf)
        self._found: CaptureTarget | None = None
        self._not_listed_while_paused = 0
        self._tags: set[tuple[int, ...]] = set()  # the 802.1Q tags of the frames listed: where a ping is tagged
        self._file_bytes = 0  # how much of the capture file holds the packets listed so far, whole
        self._pool = QThreadPool(self)  # a capture holds its thread while it runs
        self._worker = Worker(self.feed)
        self._worker.yielded.connect(self._report)
        self._worker.errored.connect(self._failed)  # slots of this widget, so they run on the GUI thread
        self._worker.start(self._pool)

    def _lay_out(self) -> None:
        bar = QHBoxLayout()
        bar.addWidget(self.filter_box, 1)
        for widget in (self.pause, self.clear, self.save, self.wireshark):
            bar.addWidget(widget)
        details = QSplitter(Qt.Orientation.Horizontal)
        details.addWidget(self.layers)
        details.addWidget(self.hex)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.view)
        split.addWidget(details)
        split.setSizes([300, 150])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(bar)
        layout.addWidget(split, 1)
        layout.addWidget(self.status)

    def _report(self, message: CaptureTarget | Report) -> None:
        if isinstance(message, CaptureTarget):
            self._found = message
            return
        if message.error:
            self._failed(message.error)
        elif message.listening and self._found is not None:
            self._listening(self._found)
        if message.packets and self.pause.isChecked():
            self._not_listed_while_paused += len(message.packets)
        elif message.packets:
            self._arrived(message.packets)
        self._file_bytes = max(self._file_bytes, message.file_bytes)
        if message.captured or message.finished:
            self._count(message.captured, message.kernel_drops, message.not_listed + self._not_listed_while_paused)

    def _listening(self, target: CaptureTarget) -> None:
        self.target = target
        where = f"namespace {target.netns}" if target.netns else "the host"
        self.status.setText(f"listening on {target.label} ({target.device} in {where})")
        self.save.setEnabled(True)
        self.wireshark.setEnabled(not why_not())
        self.wireshark.setToolTip(why_not() or f"Wireshark opens the packets captured on {target.label} so far")
        self.started.emit(target)

    def _failed(self, why: object) -> None:
        self.status.setText(f"capture failed: {why}")

    def _arrived(self, batch: list) -> None:
        scroll = self.view.verticalScrollBar()
        at_end = scroll.value() >= scroll.maximum() - 2
        self.table.add(batch)
        self._tags.update(summary.vlans for summary, _ in batch if summary.vlans)
        if at_end:
            self.view.scrollToBottom()

    def _count(self, captured: int, dropped: int, not_shown: int) -> None:
        hidden = f", {not_shown} not listed (all are in the capture file)" if not_shown else ""
        notice = f"; {self._notice}" if self._notice else ""
        tags = ", ".join(" ".join(f"vlan {vlan}" for vlan in vlans) for vlans in sorted(self._tags))
        tagged = f"; frames tagged {tags}" if tags else ""
        self.status.setText(f"{self.target.label if self.target else self.title}: {captured} packets captured, "
                            f"{dropped} dropped by the kernel{hidden}{tagged}{notice}")

    def _tell(self, notice: str) -> None:
        self._notice = notice
        self.status.setText(notice)

    def _chosen(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        rows = selected.indexes()
        if not rows:
            return
        summary, raw = self.table.packet(self.shown.mapToSource(rows[0]).row())
        self.layers.clear()
        for layer in layers(raw.data):
            item = QTreeWidgetItem([layer.name, ""])
            item.addChildren([QTreeWidgetItem([name, value]) for name, value in layer.fields])
            self.layers.addTopLevelItem(item)
            item.setExpanded(True)
        self.layers.resizeColumnToContents(0)
        self.hex.setPlainText(hex_dump(raw.data))
        if self.target is not None and self.target.link_id:
            self.packet_chosen.emit(self.target.link_id)

    def _save(self) -> None:
        name, _ = QFileDialog.getSaveFileName(self, "Save capture", self.file_name(), "pcapng (*.pcapng)")
        if not name:
            return
        try:
            copy_head(self.feed.file, Path(name), self._file_bytes)
        except OSError as error:
            self._tell(f"could not save the capture in {name}: {error.strerror or error}")
        else:
            self._tell(f"saved in {name}")

    def file_name(self) -> str:
        """What the capture's packets are called in a file: the port listened on, as r1-eth1.pcapng."""
        label = self.target.label if self.target is not None else self.title
        return f"{label.replace(':', '-').replace('/', '-')}.pcapng"

    def _open_wireshark(self) -> None:
        """Wireshark on the packets captured so far (every one, listed or not); it ends with the tab."""
        if self.target is None:
            return
        try:
            viewer = Viewer(self.feed.file, self._file_bytes, self.file_name())
        except OSError as error:
            self._tell(f"Wireshark could not start: {error.strerror or error}")
            return
        self._wireshark.append(viewer)
        QTimer.singleShot(VIEWER_SETTLE_MS, lambda: self._viewer_check(viewer))

    def _viewer_check(self, viewer: Viewer) -> None:
        """A Wireshark that fails at once (no display) would leave the button looking dead."""
        code = viewer.process.poll()
        if code and viewer in self._wireshark:
            self._tell(f"Wireshark ended at once (exit status {code}); is there a display?")

    def close_capture(self) -> None:
        """End tcpdump (and any Wireshark this tab opened), wait for the worker, remove the temporary file."""
        self.feed.close()
        self._pool.waitForDone()
        for viewer in self._wireshark:
            viewer.close()
