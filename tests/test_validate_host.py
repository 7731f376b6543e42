"""`vtopo validate` and `plan` look at this host (lower devices, images, KVM), unless told --offline."""
from __future__ import annotations

import json
from pathlib import Path

from vtopo.cli.main import main
from vtopo.resources import TOPOLOGIES


def lab_needing_what_the_host_lacks(directory: Path) -> Path:
    document = json.loads((TOPOLOGIES / "macvlan-bridge.vtopo").read_text())
    next(n for n in document["nodes"] if n["kind"] == "macvlan")["settings"]["lower"] = "vtnolower0"
    document["nodes"].append({"id": "vm1", "name": "vm1", "kind": "vm", "position": {"x": 0, "y": 0},
                              "settings": {"image": "/nonexistent/disk.qcow2"}})
    path = directory / "lacking.vtopo"
    path.write_text(json.dumps(document))
    return path


CONSENT = ["--allow-host-device", "vtnolower0", "--allow-image", "/nonexistent/disk.qcow2"]  # outside the lab


def test_validate_names_a_missing_lower_device_and_image(tmp_path, capsys):
    lab = lab_needing_what_the_host_lacks(tmp_path)
    assert main(["validate", *CONSENT, str(lab)]) == 2
    err = capsys.readouterr().err
    assert "vtnolower0 does not exist on the host" in err
    assert "node vm1: /nonexistent/disk.qcow2 does not exist on the host" in err


def test_validate_offline_does_not_look_at_the_host(tmp_path, capsys):
    assert main(["validate", "--offline", *CONSENT, str(lab_needing_what_the_host_lacks(tmp_path))]) == 0
    assert "does not exist" not in capsys.readouterr().err
