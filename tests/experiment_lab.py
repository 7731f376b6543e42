"""A lab file with a quick experiment, for the tests of `vtopo experiment` that deploy: bridge-veth's containers
pinged from c1, one pair against another over the same bridge."""
from __future__ import annotations

from pathlib import Path

from vtopo.lab import open_lab
from vtopo.model import io
from vtopo.model.expectations import Experiment
from vtopo.model.measurements import Comparison, Pair, Test
from vtopo.resources import TOPOLOGIES

COMPARISON = "c3 vs c2"


def lab_with_experiment(directory: Path, name: str) -> Path:
    """bridge-veth renamed `name`, with an experiment of two pairs, one ping test, two runs per cell; saved in
    `directory`, readable by every user."""
    topology = open_lab(TOPOLOGIES / "bridge-veth.vtopo").topology
    topology.name = name
    topology.experiment = Experiment(
        pairs=[Pair("c1-c2", "c1", "c2"), Pair("c1-c3", "c1", "c3")],
        tests=[Test("ping", "ping", {"count": 5, "interval_s": 0.05})],
        comparisons=[Comparison(COMPARISON, "c1-c3/ping", "c1-c2/ping", "")], repeats=2, warmup=0)
    path = directory / f"{name}.vtopo"
    io.save(topology, path)
    path.chmod(0o644)
    return path
