"""Where a node's mount namespace is kept: its namespaces directory, made a private mount of its own."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.privileged

# In a mount namespace of its own: the namespaces directory of the host (a mount, during another lab) hidden under a
# simulated host's /run/vtopo, as scripts/sim-host.sh binds it; then a node's mount namespace kept there.
SHADOWED = textwrap.dedent("""
    import os, subprocess, sys
    from vtopo.host import namespace_maker, syscalls
    from vtopo.host.syscalls import MS_BIND
    base = sys.argv[1]
    syscalls.mount("tmpfs", base, "tmpfs", 0)
    for path in ("run/vtopo/ns", "sim/run"):
        os.makedirs(f"{base}/{path}")
    syscalls.mount(f"{base}/run/vtopo/ns", f"{base}/run/vtopo/ns", None, MS_BIND)
    syscalls.mount(f"{base}/sim/run", f"{base}/run/vtopo", None, MS_BIND)
    directory = f"{base}/run/vtopo/ns"
    os.mkdir(directory)
    print("mount point before:", namespace_maker._is_mount_point(directory))
    node = subprocess.Popen(["unshare", "--mount", "--propagation", "slave", "sleep", "30"])
    try:
        namespace_maker._keep(f"/proc/{node.pid}/ns/mnt", f"{directory}/c1.mnt")
        print("kept:", os.stat(f"{directory}/c1.mnt").st_ino == os.stat(f"/proc/{node.pid}/ns/mnt").st_ino)
    finally:
        node.kill()
""")


def test_a_node_is_kept_where_a_hidden_mount_names_the_namespaces_directory_too(tmp_path) -> None:
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable, "-c", SHADOWED,
                           str(tmp_path)], capture_output=True, text=True, timeout=30)
    assert done.stdout.splitlines() == ["mount point before: False", "kept: True"], done.stderr
