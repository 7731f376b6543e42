"""vtopo handout: the student's copy leaves the teacher's hidden checks and solutions out, and the printable sheet
shows the diagram and every stage, with no way for a lab's text to put script or outside files into it."""
from __future__ import annotations

import base64
import json
import re
import shutil

from vtopo.cli.main import main
from vtopo.model import io
from vtopo.resources import TOPOLOGIES

ASSIGNMENT = TOPOLOGIES / "ospf-assignment.vtopo"


def test_handout_writes_the_students_copy_and_a_sheet(tmp_path, capsys):
    assert main(["handout", str(ASSIGNMENT), "-o", str(tmp_path)]) == 0
    assert "2 hidden checks left out" in capsys.readouterr().out
    assignment, copy = io.load(ASSIGNMENT), io.load(tmp_path / "ospf-assignment.vtopo")
    hidden = [check.name for check in assignment.checks if check.hidden]
    assert hidden and not any(check.hidden for check in copy.checks)
    assert [check.name for check in copy.checks] == [c.name for c in assignment.checks if not c.hidden]
    assert all(not stage.solution for stage in copy.stages)
    assert [stage.title for stage in copy.stages] == [stage.title for stage in assignment.stages]
    assert copy.stages[2].checks == ["h1 reaches h3", "h3 reaches h1", "r1 learned lan3 by OSPF"]
    copy_text = (tmp_path / "ospf-assignment.vtopo").read_text()
    assert not any(name in copy_text for name in hidden) and '"solution"' not in copy_text

    sheet = (tmp_path / "ospf-assignment.html").read_text()
    svg = re.search(r"<svg.*</svg>", sheet, re.DOTALL)
    assert svg is not None
    drawn = set(re.findall(r"<text[^>]*>([^<]*)</text>", svg.group()))
    assert {node.name for node in assignment.nodes.values()} <= drawn
    assert all(f"Stage {n}: {stage.title}</h2>" in sheet for n, stage in enumerate(assignment.stages, start=1))
    assert "<strong>area 0</strong>" in sheet  # the instructions' Markdown, rendered
    assert not any(name in sheet for name in hidden) and "router-id 2.2.2.2`" not in sheet


def test_a_labs_text_cannot_put_script_or_outside_files_into_the_sheet(tmp_path, capsys):
    folder = tmp_path / "course"
    folder.mkdir()
    (tmp_path / "secret.png").write_bytes(b"\x89PNG secret outside the lab's folder")
    (folder / "ring.png").write_bytes(b"\x89PNG the ring")
    (folder / "escape.png").symlink_to(tmp_path / "secret.png")
    document = json.loads(ASSIGNMENT.read_text())
    document["lab"]["name"] = "<script>alert('lab')</script>"
    document["stages"][0]["title"] = "<script>alert('title')</script>"
    document["stages"][0]["instructions"] = (
        "<script>alert('raw')</script>\n\n<img src=x onerror=alert(1)>\n\n[click](javascript:alert(1))\n\n"
        "![ring](ring.png) ![up](../secret.png) ![abs](/etc/hostname.png) ![link](escape.png) "
        "![far](https://example.com/x.png)")
    assignment = folder / "assignment.vtopo"
    assignment.write_text(json.dumps(document))
    assert main(["handout", str(assignment), "-o", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    sheet = (tmp_path / "out" / "_script_alert__lab____script_.html").read_text()
    assert "<script" not in sheet and "<img src=x" not in sheet and 'href="javascript' not in sheet
    assert "&lt;script&gt;alert(&#x27;title&#x27;)&lt;/script&gt;" in sheet
    assert sheet.count("<img ") == 1 and 'src="data:image/png;base64,iVBORyB0aGUgcmluZw=="' in sheet
    assert base64.b64encode((tmp_path / "secret.png").read_bytes()).decode() not in sheet
    for refused in ("../secret.png", "/etc/hostname.png", "escape.png", "https://example.com/x.png"):
        assert f"[image {refused} is not a file in the lab's folder]" in sheet
    assert "Content-Security-Policy\" content=\"default-src 'none'" in sheet


def test_handout_never_replaces_the_assignment(tmp_path, capsys):
    assignment = tmp_path / "ospf-assignment.vtopo"
    shutil.copy(ASSIGNMENT, assignment)
    assert main(["handout", str(assignment), "-o", str(tmp_path)]) == 1
    assert "would replace the assignment" in capsys.readouterr().err
    assert assignment.read_text() == ASSIGNMENT.read_text()


def test_without_graphviz_the_handout_says_so_and_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert main(["handout", str(ASSIGNMENT), "-o", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err == ("Graphviz's neato is not installed: scripts/setup.sh installs it (Debian: "
                                       "graphviz)\n")
    assert not (tmp_path / "out").exists()
