"""An assignment handed out: the student's copy (without the teacher's hidden checks and solutions) and a printable
sheet (one HTML file) with the lab's diagram and each stage's title and instructions.

The sheet is built from text someone wrote, for a browser to show: the instructions' Markdown is rendered with raw
HTML escaped and unsafe links refused (markdown-it-py, html off), every other text is escaped, images are embedded only
from files inside the lab's folder, and the page's Content-Security-Policy lets it run no script and load nothing.
"""
from __future__ import annotations

import base64
import html
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote, urlsplit

import graphviz
from markdown_it import MarkdownIt
from markdown_it.token import Token

from vtopo.interop.diagram import to_dot
from vtopo.model.topology import Topology

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".svg": "image/svg+xml", ".webp": "image/webp"}
MAX_IMAGE_BYTES = 4 * 1024 * 1024
POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
STYLE = ("body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.4}"
         "svg{max-width:100%;height:auto}img{max-width:100%}pre{background:#f4f4f4;padding:.5em}"
         "section{page-break-inside:avoid}")


def student_copy(topology: Topology) -> Topology:
    """The lab without its hidden checks (nor their names in the stages) and without the stages' solutions."""
    copy = topology.copy()
    hidden = {check.name for check in copy.checks if check.hidden}
    copy.checks = [check for check in copy.checks if not check.hidden]
    copy.stages = [replace(stage, checks=[name for name in stage.checks if name not in hidden], solution="")
                   for stage in copy.stages]
    return copy


def image_in_folder(source: str, folder: Path) -> Path | None:
    """The file an image reference names, when it is a relative path to an image file inside `folder`; else None
    (a URL, an absolute path, a path out of the folder through '..' or a link, a file too large)."""
    parts = urlsplit(source)
    if parts.scheme or parts.netloc or not parts.path or parts.path.startswith("/"):
        return None
    base = folder.resolve()
    path = (base / unquote(parts.path)).resolve()
    if not path.is_relative_to(base) or path.suffix.lower() not in IMAGE_TYPES or not path.is_file():
        return None
    return path if path.stat().st_size <= MAX_IMAGE_BYTES else None


@dataclass(frozen=True)
class Sheet:
    """Renders a lab's Markdown to safe HTML, its images embedded from `folder`."""

    folder: Path

    def markdown(self, text: str) -> str:
        renderer = MarkdownIt("commonmark", {"html": False})
        tokens = renderer.parse(text)
        for token in tokens:
            if token.children:
                token.children = [self._image(child) if child.type == "image" else child for child in token.children]
        return renderer.renderer.render(tokens, renderer.options, {})

    def _image(self, token: Token) -> Token:
        source = str(token.attrs.get("src", ""))
        path = image_in_folder(source, self.folder)
        if path is None:
            return Token("text", "", 0, content=f"[image {source} is not a file in the lab's folder]")
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        token.attrs["src"] = f"data:{IMAGE_TYPES[path.suffix.lower()]};base64,{data}"
        return token

    def page(self, topology: Topology) -> str:
        title = html.escape(topology.name)
        parts = [f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
                 f"<meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\">"
                 f"<title>{title}</title><style>{STYLE}</style></head><body>", f"<h1>{title}</h1>"]
        if topology.notes:
            parts.append(f"<p style=\"white-space:pre-wrap\">{html.escape(topology.notes)}</p>")
        parts.append(f"<figure>{diagram_svg(topology)}</figure>")
        for number, stage in enumerate(topology.stages, start=1):
            parts.append(f"<section><h2>Stage {number}: {html.escape(stage.title)}</h2>"
                         f"{self.markdown(stage.instructions)}</section>")
        parts.append("</body></html>\n")
        return "\n".join(parts)


def diagram_svg(topology: Topology) -> str:
    """The lab's diagram as an inline SVG element: its Graphviz graph drawn by neato, each node where the canvas
    has it. Graphviz escapes every label it writes."""
    try:
        svg = graphviz.Source(to_dot(topology), engine="neato").pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        raise ValueError("Graphviz's neato is not installed: scripts/setup.sh installs it (Debian: graphviz)") from None
    except graphviz.CalledProcessError as error:
        raise ValueError(f"Graphviz could not draw the lab's diagram: {str(error.stderr).strip()}") from None
    return svg[svg.index("<svg"):]



def write_handout(assignment: Path, topology: Topology, directory: Path) -> tuple[Path, Path]:
    """The student's copy of `topology` (read from `assignment`) and its sheet, written into `directory` as
    NAME.vtopo and NAME.html; the sheet shows the student's copy, images from the assignment's folder."""
    from vtopo.model.io import dumps, write_atomically
    from vtopo.user_data import file_stem

    handed_out = student_copy(topology)
    name = file_stem(topology.name)
    copy_path, sheet_path = directory / f"{name}.vtopo", directory / f"{name}.html"
    if copy_path.resolve() == assignment.resolve():
        raise ValueError(f"the student's copy would replace the assignment {assignment}: choose another folder")
    sheet = Sheet(assignment.parent).page(handed_out)
    directory.mkdir(parents=True, exist_ok=True)
    write_atomically(copy_path, dumps(handed_out))
    write_atomically(sheet_path, sheet)
    return copy_path, sheet_path
