"""A lab as a draw.io or Graphviz diagram for handouts: every node at its canvas position with its name and kind,
every link with each end's port, addresses and VLANs; Graphviz itself draws the dot file at those positions."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from xml.etree import ElementTree

import pytest
from vtopo.cli.main import main
from vtopo.interop.diagram import to_dot, to_drawio
from vtopo.model import io
from vtopo.model.topology import Node, Topology

from tests.vlan_labs import vlan_lab


def cells(drawio: str) -> dict[str, ElementTree.Element]:
    root = ElementTree.fromstring(drawio)
    assert root.tag == "mxfile"
    return {cell.attrib["id"]: cell for cell in root.iter("mxCell")}


def test_drawio_keeps_positions_names_addresses_and_vlans() -> None:
    lab = vlan_lab("ovs")
    found = cells(to_drawio(lab))
    for node in lab.nodes.values():
        cell = found[f"node-{node.id}"]
        assert cell.attrib["value"] == f"{node.name}\n({node.kind})"
        geometry = cell.find("mxGeometry")
        assert geometry is not None
        centre = (float(geometry.attrib["x"]) + float(geometry.attrib["width"]) / 2,
                  float(geometry.attrib["y"]) + float(geometry.attrib["height"]) / 2)
        assert centre == (node.position.x, node.position.y)
    for link in lab.links.values():
        edge = found[f"link-{link.id}"]
        assert (edge.attrib["source"], edge.attrib["target"]) == (f"node-{link.a.node}", f"node-{link.b.node}")
    assert found["link-link-h1-h1-eth0"].attrib["value"] == "eth0\n10.0.0.1/24"
    assert found["link-link-h1-s1-p1"].attrib["value"] == "p1\naccess 10"
    assert found["link-link-trunk-s2-p3"].attrib["value"] == "p3\ntrunk 10,20"


def test_dot_is_drawn_by_graphviz_at_the_canvas_positions(tmp_path: Path) -> None:
    lab = vlan_lab("ovs")
    dot = tmp_path / "vlans.dot"
    dot.write_text(to_dot(lab))
    drawn = subprocess.run(["neato", "-Tjson", str(dot)], capture_output=True, text=True, check=True)
    graph = json.loads(drawn.stdout)
    positions = {item["name"]: tuple(map(float, item["pos"].split(","))) for item in graph["objects"]}
    origin = positions["h1"]
    for node in lab.nodes.values():  # Graphviz's y grows upwards; 72 points an inch on both sides
        x, y = positions[node.id]
        assert (round(x - origin[0]), round(origin[1] - y)) == (round(node.position.x - lab.nodes["h1"].position.x),
                                                                 round(node.position.y - lab.nodes["h1"].position.y))
    labels = {(edge["taillabel"], edge["headlabel"]) for edge in graph["edges"]}
    assert ("eth0\n10.0.0.3/24", "p3\naccess 20") in labels


def test_names_that_need_quoting_stay_whole(tmp_path: Path) -> None:
    lab = Topology(name='odd "lab"; {x}')
    lab.add_node(Node("n1", 'a"b', "container"))
    dot = to_dot(lab)
    drawn = subprocess.run(["dot", "-Tjson"], input=dot, capture_output=True, text=True, check=True)
    assert [item["label"] for item in json.loads(drawn.stdout)["objects"]] == ['a"b\n(container)']
    assert cells(to_drawio(lab))["node-n1"].attrib["value"] == 'a"b\n(container)'


@pytest.mark.parametrize("fmt", ["drawio", "dot"])
def test_cli_writes_the_diagram_beside_the_lab(tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "vlans.vtopo"
    io.save(vlan_lab("ovs"), source)
    assert main(["export", str(source), "--to", fmt]) == 0
    written = tmp_path / f"vlans.{fmt}"
    assert f"exported {source} to {written}" in capsys.readouterr().out
    assert "trunk 10,20" in written.read_text()
