"""The File menu: new, open, save, import, export, quit."""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QFileDialog, QMenu, QStyle

from vtopo.gui.actions.designer import Designer
from vtopo.gui.actions.spec import SEPARATOR, Action, Key, Menu, Submenu
from vtopo.gui.canvas import export as pictures
from vtopo.interop.diagram import to_dot, to_drawio
from vtopo.model.io import write_atomically

DIAGRAMS = {"drawio": to_drawio, "dot": to_dot}  # export formats another program draws and edits
FORMAT_LABELS = {"drawio": "draw.io", "dot": "Graphviz dot"}
Pixmap = QStyle.StandardPixmap


def export(designer: Designer, fmt: str, for_print: bool = False) -> None:
    """Export the canvas as a picture (png, svg), or the lab as a diagram another program edits (drawio, dot)."""
    label = FORMAT_LABELS.get(fmt, fmt.upper())
    title = "Export for print (PNG, white, no grid)" if for_print else f"Export as {label}"
    topology = designer.parts.editor.topology
    name, _ = QFileDialog.getSaveFileName(designer.window, title, f"{topology.name}.{fmt}", f"{label} (*.{fmt})")
    if not name:
        return
    path = Path(name)
    scene = designer.parts.editor.scene
    if fmt in DIAGRAMS:
        try:
            write_atomically(path, DIAGRAMS[fmt](topology))
            ok = True
        except OSError:
            ok = False
    else:
        ok = pictures.export_png(scene, path, for_print=for_print) if fmt == "png" else \
            pictures.export_svg(scene, path, topology.name, for_print=for_print)
    designer.say(f"exported {path}" if ok else f"could not write {path}")


def fill_recent(designer: Designer, menu: QMenu) -> None:
    for path in designer.parts.files.recent():
        menu.addAction(str(path), partial(designer.parts.files.open_path, path))


def standard_icon(pixmap: QStyle.StandardPixmap) -> Callable[[QStyle], QIcon]:
    return lambda style: style.standardIcon(pixmap)


MENU = Menu("&File", (
    Action("file.new", "&New lab", lambda d: d.parts.files.new_lab(), keys=(Key.New,),
           icon=standard_icon(Pixmap.SP_FileIcon)),
    Action("file.open", "&Open…", lambda d: d.parts.files.open_dialog(), keys=(Key.Open,),
           icon=standard_icon(Pixmap.SP_DialogOpenButton)),
    Submenu("file.recent", "Open &recent", fill=fill_recent, enabled_when=lambda c: c.recent),
    Action("file.save", "&Save", lambda d: d.parts.files.save(), keys=(Key.Save,),
           icon=standard_icon(Pixmap.SP_DialogSaveButton)),
    Action("file.save_as", "Save &as…", lambda d: d.parts.files.save_as(), keys=(Key.SaveAs,)),
    SEPARATOR,
    Action("file.import_lab", "&Import containerlab or GNS3…", lambda d: d.parts.files.import_dialog(),
           keys=("Ctrl+I",)),
    SEPARATOR,
    Action("file.export_png", "Export as &PNG…", lambda d: export(d, "png")),
    Action("file.export_svg", "Export as S&VG…", lambda d: export(d, "svg")),
    Action("file.export_print", "Export for p&rint (PNG, white, no grid)…",
           lambda d: export(d, "png", for_print=True)),
    Action("file.export_drawio", "Export as &draw.io…", lambda d: export(d, "drawio")),
    Action("file.export_dot", "Export as Graphviz d&ot…", lambda d: export(d, "dot")),
    SEPARATOR,
    Action("file.quit", "&Quit", lambda d: d.window.close(), keys=(Key.Quit, "Ctrl+Q")),  # Quit may have no key
))
