"""An image is untrusted input, like a lab file: member a deploys, through a real agent, nodes from images a hostile
author made. One shell is set-uid root; one image's entrypoint tries the known escapes from its first instruction
(another network namespace by /proc/1 and /run/netns, naming it and RTM_NEWNSID, a mount, a device node, the host's
disk, a host sysctl, a module loaded for a link type); one fills its disk, and a shell there asks for more memory than
the node has. None reaches anything of the host's or of member b's; an image loaded anew under the same reference does not replace the one the lab was deployed with; and
destroy leaves nothing."""
from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from image_labs import derived_image, engine_leftovers, own_images
from residue import snapshot
from security.members import prefix_of, saved
from vtopo.model.topology import Node, Topology
from wiring import wire

pytestmark = pytest.mark.privileged

LAB = "hostile-images"
CAP_SYS_ADMIN, CAP_SYS_MODULE = 21, 16
FILLER_MB = 64  # each node's memory
ESCAPES = """#!/bin/sh
# each attempt says ESCAPED where it works; the node's own objects (a dummy device in its namespace) are its own
exec >/tmp/escapes 2>&1
ls /run/netns 2>/dev/null | grep -q . && echo "ESCAPED: /run/netns lists namespaces"
ip link add hostile0 type dummy; ip link set hostile0 netns 1; nsenter --net=/proc/1/ns/net ip link set hostile0 up
ip netns attach host 1 && echo "ESCAPED: named another network namespace"
ip netns set host 7 && echo "ESCAPED: RTM_NEWNSID gave the host's namespace an id"
mount -t tmpfs none /mnt && echo "ESCAPED: mounted a tmpfs"
mount --bind / /mnt && echo "ESCAPED: made a bind mount"
mknod /tmp/sda b 8 0 && echo "ESCAPED: made a block device"
head -c1 /dev/vda >/dev/null && echo "ESCAPED: read the host's disk"
echo 1 > /proc/sys/kernel/sysrq && echo "ESCAPED: wrote a host sysctl"
ip link add hostile1 type vxcan && echo "ESCAPED: loaded a module for a link type"
perl -e 'my ($m, $p) = ("\\0" x 64, ""); syscall(175, $m, 64, $p) == -1 and print "init_module: $!\\n"'
perl -e 'open(my $f, "<", "/dev/null"); my $p = ""; syscall(313, fileno($f), $p, 0) == -1 and print "finit_module: $!\\n"'
echo done
exec sleep infinity
"""


@pytest.fixture(scope="module")
def hostile() -> Iterator[Path]:
    own_images()
    with tempfile.TemporaryDirectory() as scratch:
        for name, cmd, setuid, files in (
                ("hostile/setuid", ["sleep", "infinity"], ("/bin/bash", "/usr/bin/ping"), {}),
                ("hostile/escapes", ["/escapes"], (), {"/escapes": ESCAPES})):
            derived_image(name, made(Path(scratch), name), cmd, setuid, files)
        yield Path(scratch)
    for name in ("hostile/setuid", "hostile/escapes"):
        subprocess.run([sys.executable, "-m", "vtopo", "image", "rm", name], capture_output=True, check=False)


def made(scratch: Path, name: str) -> Path:
    directory = scratch / f"{name.replace('/', '-')}-{len(list(scratch.iterdir()))}"
    directory.mkdir()
    return directory


def hostile_lab(directory: Path) -> Path:
    topology = Topology(name=LAB)
    for node, image, disk in (("s1", "hostile/setuid", 256), ("e1", "hostile/escapes", 256),
                              ("f1", "vtopo/toolbox", 32)):
        topology.add_node(Node(id=node, name=node, kind="container",
                               settings={"image": image, "disk_mb": disk, "memory_mb": FILLER_MB}))
    wire(topology, ("s1:eth0", "e1:eth0", "10.7.0.1/24", "10.7.0.2/24"))
    return saved(topology, directory)


def loaded_modules() -> str:
    """The kernel's loaded modules ("" from a kernel built without modules)."""
    path = Path("/proc/modules")
    return path.read_text() if path.exists() else ""


def status_of(pid: int) -> dict[str, str]:
    fields = (line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return {key: value.strip() for key, value in fields}


def test_hostile_images_reach_nothing_of_the_hosts(agent, users, readable_dir, hostile):
    a, uid = users["a"].pw_name, users["a"].pw_uid
    before, engine_before = snapshot(), engine_leftovers()
    host_links, modules = Path("/proc/net/dev").read_text(), loaded_modules()
    deployed = agent.vtopo(a, "deploy", str(hostile_lab(readable_dir)))
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    try:
        prefix = prefix_of(LAB)
        # a set-uid root shell: no file of the image is set-uid on the node, and its process is the member outside,
        # with no new privileges and no capability of the host's
        modes = agent.vtopo(a, "exec", LAB, "s1", "--", "stat", "-c", "%a %U", "/bin/bash", "/usr/bin/ping")
        assert modes.stdout.split() == ["755", "root", "755", "root"], modes.stdout + modes.stderr
        first = int(Path(f"/run/vtopo/oci/{prefix}-s1/pid").read_text())
        status = status_of(first)
        assert status["Uid"].split() == [str(uid)] * 4 and status["NoNewPrivs"] == "1", status
        effective = int(status["CapEff"], 16)
        assert not effective & (1 << CAP_SYS_ADMIN | 1 << CAP_SYS_MODULE), status["CapEff"]
        raised = agent.vtopo(a, "exec", LAB, "s1", "--", "bash", "-p", "-c",
                             "cat /proc/self/status /proc/self/uid_map; echo b > /proc/sysrq-trigger && echo WROTE")
        assert "Uid:\t0\t0\t0\t0" in raised.stdout, raised.stdout + raised.stderr  # root of the lab's namespace
        assert raised.stdout.split()[-3:] == ["0", str(uid), "1"], raised.stdout  # which is the member alone outside
        assert "WROTE" not in raised.stdout, raised.stdout  # and writes nothing of the host's
        # the image loaded anew under the same reference does not replace what the lab runs: a restart starts the
        # digest the lab was deployed with
        derived_image("hostile/setuid", made(hostile, "hostile/setuid"), ["sleep", "1000"], (),
                      {"/replaced": "#!/bin/sh\n"})
        restarted = agent.vtopo(a, "node", LAB, "s1", "restart")
        assert restarted.returncode == 0, restarted.stdout + restarted.stderr
        kept = agent.vtopo(a, "exec", LAB, "s1", "--", "sh", "-c", "cat /proc/1/cmdline | tr '\\0' ' '; ls /replaced")
        assert kept.stdout.startswith("sleep infinity") and "No such file" in kept.stderr, kept.stdout + kept.stderr
        # the entrypoint's escapes, tried as the image's first process
        deadline = time.monotonic() + 20
        while "done" not in (said := agent.vtopo(a, "exec", LAB, "e1", "--", "cat", "/tmp/escapes").stdout):
            assert time.monotonic() < deadline, said
            time.sleep(0.5)
        assert "ESCAPED" not in said, said
        # x86_64's numbers, refused for want of the host's CAP_SYS_MODULE (a kernel without modules has neither)
        refusal = "Operation not permitted" if Path("/proc/modules").exists() else "Function not implemented"
        for call in ("init_module", "finit_module"):
            assert f"\n{call}: {refusal}" in said, said
        assert "hostile0" not in Path("/proc/net/dev").read_text() and "hostile0" not in host_links
        assert loaded_modules() == modules
        assert not Path("/mnt").is_mount() and not any(Path("/run/netns").glob("hostile*"))
        # a disk filler stops at its node's disk, and the host's disk keeps its space
        filled = agent.vtopo(a, "exec", LAB, "f1", "--", "sh", "-c",
                             "dd if=/dev/zero of=/fill bs=1M count=1024 2>&1; du -m /fill")
        assert "No space left" in filled.stdout, filled.stdout + filled.stderr
        written = int(re.findall(r"^(\d+)\s+/fill$", filled.stdout, re.M)[0])
        assert written <= 32, filled.stdout
        # a shell started from the terminal is held to the node's memory as the image's processes are: tail keeps a
        # line of 256 MiB whole, and is killed at the node's 64 MiB (outside the node's cgroup, it would have it all)
        hog = agent.vtopo(a, "exec", LAB, "f1", "--", "sh", "-c", "head -c 256M /dev/zero | tail -n 1 | wc -c")
        assert int(hog.stdout.split()[0]) < FILLER_MB << 20, hog.stdout + hog.stderr
        cgroup = agent.vtopo(a, "exec", LAB, "f1", "--", "cat", "/proc/self/cgroup")
        assert f":memory:/vtopo/vtopo-{prefix}-f1\n" in cgroup.stdout, cgroup.stdout + cgroup.stderr
    finally:
        agent.vtopo(a, "destroy", LAB)
    assert engine_leftovers() == engine_before
    assert snapshot() - before == {}
