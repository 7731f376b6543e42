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
made = sys.argv[3] == "made"
def counted(apply):
    def call(self, op):
        calls[0] += 1
        if calls[0] == int(sys.argv[2]) and not made:
            os._exit(9)
        apply(self, op)
        if calls[0] == int(sys.argv[2]):
            os._exit(9)
    return call
Applier.apply = counted(real_apply)
Applier.apply_ovs_batch = counted(real_batch)
Deployer().deploy(open_lab(sys.argv[1]).topology)
"""


def deploy_killed_at_call(lab: Path, call: int, made: bool = False) -> int:
    """Deploy `lab` and die at host call number `call` (an OVS batch is one call), before it is made, or once it is
    (`made`: the deploy's last call too). Returns the exit code."""
    return subprocess.run([sys.executable, "-c", KILLED_AT_CALL, str(lab), str(call),
                           "made" if made else "before"]).returncode


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
