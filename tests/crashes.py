"""Deploys and destroys that die as under kill -9 (os._exit: no rollback, no destroy), run in a child process."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

KILLED_AT_CALL = """
import os, sys
from vtopo.host.applier import Applier
from vtopo.host.deployer import Deployer
from vtopo.lab import open_lab
calls = [0]
real_apply, real_batch = Applier.apply, Applier.apply_ovs_batch
def count():
    calls[0] += 1
    if calls[0] == int(sys.argv[2]):
        os._exit(9)
Applier.apply = lambda self, op: (count(), real_apply(self, op))
Applier.apply_ovs_batch = lambda self, ops: (count(), real_batch(self, ops))
Deployer().deploy(open_lab(sys.argv[1]).topology)
"""


def deploy_killed_at_call(lab: Path, call: int) -> int:
    """Deploy `lab` and die at host call number `call` (an OVS batch is one call). Returns the exit code."""
    return subprocess.run([sys.executable, "-c", KILLED_AT_CALL, str(lab), str(call)]).returncode


DESTROY_KILLED_AT_CALL = """
import os, sys
from vtopo.host.applier import Applier
from vtopo.host.deployer import Deployer
calls = [0]
real_undo = Applier.undo
def count():
    calls[0] += 1
    if calls[0] == int(sys.argv[2]):
        os._exit(9)
Applier.undo = lambda self, op: (count(), real_undo(self, op))
Deployer().destroy(sys.argv[1])
"""


def destroy_killed_at_call(lab_name: str, call: int) -> int:
    """Destroy the lab named `lab_name` and die at undo call number `call`. Returns the exit code."""
    return subprocess.run([sys.executable, "-c", DESTROY_KILLED_AT_CALL, lab_name, str(call)]).returncode
