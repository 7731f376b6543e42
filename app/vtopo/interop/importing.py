"""Which reader a file goes to: a `.gns3` project, or a containerlab topology (YAML)."""
from __future__ import annotations

from pathlib import Path

from vtopo.interop.building import Imported
from vtopo.interop.containerlab import read_containerlab
from vtopo.interop.folder import TopologyFolder
from vtopo.interop.gns3 import read_gns3
from vtopo.kinds.registry import Registry
from vtopo.model.lab_text import read_text

FORMATS = "containerlab topologies (*.clab.yml *.clab.yaml *.yml *.yaml);;GNS3 projects (*.gns3);;All files (*)"


def import_lab(path: Path, registry: Registry, allowed_outside: frozenset[Path] = frozenset()) -> Imported:
    """The lab in a containerlab topology or GNS3 project. Files it names are read from its folder, or from
    `allowed_outside` (real paths of files or folders the user named). Raises LabError with every problem."""
    path = Path(path)
    text = read_text(path)
    folder = TopologyFolder(path.resolve().parent, frozenset(Path(p).resolve() for p in allowed_outside))
    name = path.name.split(".")[0] or "lab"
    if path.suffix == ".gns3":
        return read_gns3(text, folder, registry, name)
    return read_containerlab(text, folder, registry, name)
