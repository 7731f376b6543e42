"""A member's own OCI images, loaded and run through a real agent. Member a loads an OCI archive and a docker archive
from a directory only a can read (their own process reads them; an archive a cannot read is refused), lists them as
a's, and deploys a lab of them: the nodes start, run their startup commands, ping, and are captured on; the node
whose image lacks ping and iperf3 says so in one line. Member b neither sees a's images nor runs them (one line naming
the node and the image), and b's image loaded under the same reference does not replace a's. A hostile archive of a's
(a layer with symlinks, hard links and paths out of its root; an archive whose own paths climb out) harms nothing
outside a's store; an archive larger than a member's share is refused before anything reads it; an image that unpacks
to more than the share left (a layer of zeros compressed a thousandfold, thousands of empty files, directories implied
by deep paths) is refused when loaded, and leaves nothing in the store; two images within the share alone but not
together are loaded, and the node of the second is refused when it would be unpacked; an image node's memory and
CPU count in the member's quota; and a member's store goes with them: a user given the uid of one removed finds none
of their images, and `vtopo cleanup` removes the store of a user who left the group."""
from __future__ import annotations

import hashlib
import io
import os
import pwd
import re
import shutil
import subprocess
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent_process import Agent
from image_labs import FRR, TOOLBOX, copy_image, derived_archive, engine_leftovers, own_images
from members import owned_by
from residue import snapshot
from vtopo.host import image_store
from vtopo.model import io as lab_io
from vtopo.model.topology import Node, Topology
from wiring import wire

pytestmark = pytest.mark.privileged

LAB = "ownimages"
MINE, BARE = "mine/toolbox:1", "mine/bare:1"
ESCAPES = ("/etc/vtopo-escaped", "/etc/vtopo-through-link", "/etc/vtopo-traversal", "/etc/vtopo-outer",
           "/etc/vtopo-outer-link")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    own_images()
    return tmp_path_factory.mktemp("member-images")


@pytest.fixture
def stores(users: dict[str, pwd.struct_passwd]) -> Iterator[None]:
    """The test members' image stores, removed with the members."""
    yield
    for user in users.values():
        forget_store(user.pw_uid)


def forget_store(uid: int) -> None:
    shutil.rmtree(image_store.layout_of(uid), ignore_errors=True)
    shutil.rmtree(f"{image_store.STORE}/rootfs/{uid}", ignore_errors=True)
    Path(f"{image_store.MEMBER_STORES}/{uid}.json").unlink(missing_ok=True)


def given(archive: Path, user: pwd.struct_passwd, directory: Path) -> Path:
    """`archive` moved into a directory of `user`'s alone (0700): only their own process can open it."""
    directory.mkdir(mode=0o700, exist_ok=True)
    os.chown(directory, user.pw_uid, user.pw_gid)
    moved = directory / archive.name
    shutil.move(archive, moved)
    os.chown(moved, user.pw_uid, user.pw_gid)
    moved.chmod(0o600)
    return moved


def image_lab(name: str, images: dict[str, str]) -> Topology:
    """h2 (the host's programs) linked to a node of each image: t1, t2... from `images` (node: reference)."""
    topology = Topology(name=name)
    topology.add_node(Node(id="h2", name="h2", kind="container", settings={}))
    links = []
    for number, (node, reference) in enumerate(images.items(), 1):
        topology.add_node(Node(id=node, name=node, kind="container",
                               settings={"image": reference, "memory_mb": 32, "cpu_percent": 20}))
        links.append((f"{node}:eth0", f"h2:eth{number - 1}", f"10.5.{number}.1/24", f"10.5.{number}.2/24"))
    return wire(topology, *links)


def lab_file(topology: Topology, user: pwd.struct_passwd, directory: Path) -> Path:
    path = directory / f"{topology.name}-{user.pw_name}.vtopo"
    lab_io.save(topology, path)
    return owned_by(path, user)


def test_a_members_own_images_run_their_lab_alone(agent: Agent, users, readable_dir, scratch, stores):
    a, b = users["a"].pw_name, users["b"].pw_name
    mine = given(derived_archive(MINE, scratch, ["sleep", "infinity"], transport="oci-archive"), users["a"],
                 readable_dir / "a")
    bare = given(derived_archive(BARE, scratch, ["sleep", "infinity"], removed=("/usr/bin/ping", "/usr/bin/iperf3")),
                 users["a"], readable_dir / "a")
    roots = scratch / "roots.tar"
    copy_image(TOOLBOX, f"oci-archive:{roots}:roots/only:1")
    roots.chmod(0o600)
    refused = agent.vtopo(a, "image", "load", str(roots))
    assert refused.returncode == 1 and refused.stderr.strip() == f"error: cannot read {roots}: Permission denied", \
        refused.stdout + refused.stderr

    for archive, reference in ((mine, MINE), (bare, BARE)):
        loaded = agent.vtopo(a, "image", "load", str(archive))
        assert loaded.returncode == 0, loaded.stdout + loaded.stderr
        assert loaded.stdout.startswith(f"loaded {reference} sha256:") and loaded.stdout.rstrip().endswith(
            f"for {a}'s labs"), loaded.stdout
    listed = {line.split()[0]: line for line in agent.vtopo(a, "image", "list").stdout.splitlines()}
    assert listed[MINE].endswith(f"{a}'s labs") and listed[f"{TOOLBOX}:latest"].endswith("every lab"), listed
    assert MINE not in agent.vtopo(b, "image", "list").stdout
    stored = {path.name for path in Path(image_store.layout_of(users["a"].pw_uid)).iterdir()}
    assert stored == {"blobs", "index.json", "oci-layout"}, stored  # nothing of a load left beside the images
    written = {path.stat().st_uid for path in Path(image_store.layout_of(users["a"].pw_uid)).rglob("*")}
    assert written == {users["a"].pw_uid}, "the store was written by a's own processes alone"

    topology = image_lab(LAB, {"t1": MINE, "t2": BARE})
    topology.node_named("t1").startup_commands = ["cat /etc/hostname"]  # type: ignore[union-attr]
    before, engine_before = snapshot(), engine_leftovers()
    deployed = agent.vtopo(a, "deploy", str(lab_file(topology, users["a"], readable_dir)), "--allow-commands", "t1")
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    try:
        assert "  t1| t1" in deployed.stdout + deployed.stderr, deployed.stdout + deployed.stderr
        pinged = agent.vtopo(a, "exec", LAB, "t1", "--", "ping", "-c1", "-W2", "10.5.1.2")
        assert pinged.returncode == 0, pinged.stdout + pinged.stderr
        capture = agent.spawn(a, "capture", LAB, "t1:eth0", "-c", "2", "-f", "icmp")
        pings = agent.spawn(a, "exec", LAB, "t1", "--", "ping", "-c", "30", "-i", "0.2", "10.5.1.2")
        _, messages = capture.communicate(timeout=30)
        assert pings.wait(timeout=30) == 0 and capture.returncode == 0, messages
        assert "2 packets captured" in messages, messages

        no_ping = agent.vtopo(a, "ping", LAB, "t2", "h2", "-c", "1")
        assert no_ping.returncode != 0 and "t2 has no ping:" in no_ping.stderr, no_ping.stdout + no_ping.stderr
        assert len(no_ping.stderr.strip().splitlines()) == 1, no_ping.stderr
        no_iperf = agent.vtopo(a, "iperf", LAB, "h2", "t2", "-t", "1")
        assert no_iperf.returncode != 0 and "t2 has no iperf3:" in no_iperf.stderr, no_iperf.stdout + no_iperf.stderr
        assert len(no_iperf.stderr.strip().splitlines()) == 1, no_iperf.stderr

        their_lab = image_lab(f"{LAB}-b", {"t1": MINE, "t2": BARE})  # the same images, in a lab of b's own name
        theirs = agent.vtopo(b, "deploy", str(lab_file(their_lab, users["b"], readable_dir)))
        problems = theirs.stdout + theirs.stderr
        assert theirs.returncode != 0, problems
        for node, reference in (("t1", MINE), ("t2", BARE)):
            assert any(node in line and f"image {reference} is not on this host" in line
                       for line in problems.splitlines()), problems

        copy_image(FRR, f"oci-archive:{scratch / 'frr.tar'}:other/frr:1")
        frr = given(scratch / "frr.tar", users["b"], readable_dir / "b")
        replaced = agent.vtopo(b, "image", "load", str(frr), "--name", MINE)
        assert replaced.returncode == 0 and f"for {b}'s labs" in replaced.stdout, replaced.stdout + replaced.stderr
        assert listed[MINE] in agent.vtopo(a, "image", "list").stdout.splitlines(), "a's image is a's still"
        restarted = agent.vtopo(a, "node", LAB, "t1", "restart")
        assert restarted.returncode == 0, restarted.stdout + restarted.stderr
        frr_in_t1 = agent.vtopo(a, "exec", LAB, "t1", "--", "sh", "-c", "test -e /usr/lib/frr/zebra && echo FRR")
        assert "FRR" not in frr_in_t1.stdout, "b's image under a's reference ran in a's lab"
    finally:
        destroyed = agent.vtopo(a, "destroy", LAB)
    assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    assert engine_leftovers() == engine_before
    assert snapshot() - before == {}
    for user, reference in ((a, MINE), (a, BARE), (b, MINE)):
        removed = agent.vtopo(user, "image", "rm", reference)
        assert removed.returncode == 0 and removed.stdout.startswith(f"removed {reference} "), removed.stderr
    assert MINE not in agent.vtopo(a, "image", "list").stdout


HOST_DISK = os.stat("/").st_dev  # the device the host's root file system is on


def hostile_layer(path: Path) -> Path:
    """A layer whose paths leave its root: through a symlink to /etc, a symlink up, `..`, and hard links to
    /etc/shadow; and device nodes of the host's disk and memory."""
    def add(archive: tarfile.TarFile, name: str, kind: bytes = tarfile.REGTYPE, target: str = "",
            device: tuple[int, int] = (0, 0)) -> None:
        entry = tarfile.TarInfo(name)
        entry.type, entry.linkname = kind, target
        entry.devmajor, entry.devminor = device
        data = b"escaped\n" if kind == tarfile.REGTYPE else b""
        entry.size, entry.mode = len(data), 0o644
        archive.addfile(entry, io.BytesIO(data) if data else None)

    with tarfile.open(path, "w") as layer:
        add(layer, "escape", tarfile.SYMTYPE, "/etc")
        add(layer, "escape/vtopo-escaped")
        add(layer, "up", tarfile.SYMTYPE, "../../../../../../../..")
        add(layer, "up/etc/vtopo-through-link")
        add(layer, "../../../../../../../../etc/vtopo-traversal")
        add(layer, "shadow-link", tarfile.LNKTYPE, "/etc/shadow")
        add(layer, "host-shadow", tarfile.LNKTYPE, "../../../../../../../../etc/shadow")
        add(layer, "disk", tarfile.BLKTYPE, device=(os.major(HOST_DISK), os.minor(HOST_DISK)))
        add(layer, "mem", tarfile.CHRTYPE, device=(1, 1))
    return path


def climbing_out(archive: Path) -> Path:
    """`archive` with paths of its own that climb out of wherever it is unpacked."""
    with tarfile.open(archive, "a") as outer:
        entry = tarfile.TarInfo("../../../../../../../../etc/vtopo-outer")
        entry.size = 8
        outer.addfile(entry, io.BytesIO(b"escaped\n"))
    return archive


def test_a_members_hostile_archive_harms_nothing_outside_their_store(agent: Agent, users, readable_dir, scratch,
                                                                    stores):
    a = users["a"].pw_name
    shadow = hashlib.sha256(Path("/etc/shadow").read_bytes()).hexdigest()
    layout, inner, outer = scratch / "hostile", scratch / "inner.tar", scratch / "outer.tar"
    copy_image(TOOLBOX, f"oci:{layout}:hostile")
    subprocess.run(["umoci", "raw", "add-layer", "--image", f"{layout}:hostile",
                    str(hostile_layer(scratch / "layer.tar"))], check=True, capture_output=True)
    subprocess.run(["skopeo", "copy", "--quiet", f"oci:{layout}:hostile", f"oci-archive:{inner}:hostile/inner:1"],
                   check=True)
    copy_image(TOOLBOX, f"oci-archive:{outer}:hostile/outer:1")
    inner = given(inner, users["a"], readable_dir / "a")
    outer = given(climbing_out(outer), users["a"], readable_dir / "a")

    refused = agent.vtopo(a, "image", "load", str(outer))
    assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1, refused.stdout + refused.stderr
    assert "is outside of" in refused.stderr, refused.stderr
    loaded = agent.vtopo(a, "image", "load", str(inner))
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    topology = image_lab("hostile-own", {"t1": "hostile/inner:1"})
    before, engine_before = snapshot(), engine_leftovers()
    deployed = agent.vtopo(a, "deploy", str(lab_file(topology, users["a"], readable_dir)))
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    try:
        inside = agent.vtopo(a, "exec", "hostile-own", "t1", "--", "sh", "-c",
                             "cat /etc/vtopo-escaped /etc/vtopo-through-link; stat -c '%h %U' /shadow-link")
        assert inside.stdout.split()[:2] == ["escaped", "escaped"], inside.stdout + inside.stderr  # in its own /etc
        assert inside.stdout.split()[2:] == ["3", "root"], inside.stdout  # the image's own shadow, no host file
        devices = agent.vtopo(a, "exec", "hostile-own", "t1", "--", "stat", "-c", "%F", "/disk", "/mem")
        assert devices.stdout.splitlines() == ["regular empty file"] * 2, devices.stdout  # unpacked as a's files
    finally:
        destroyed = agent.vtopo(a, "destroy", "hostile-own")
    assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    assert [path for path in ESCAPES if os.path.lexists(path)] == []
    assert hashlib.sha256(Path("/etc/shadow").read_bytes()).hexdigest() == shadow
    assert Path("/etc/shadow").stat().st_uid == 0 and Path("/etc/shadow").stat().st_nlink == 1
    stored = {path.name for path in Path(image_store.layout_of(users["a"].pw_uid)).iterdir()}
    assert stored == {"blobs", "index.json", "oci-layout"}, stored
    assert engine_leftovers() == engine_before
    assert snapshot() - before == {}


@pytest.fixture
def strict_agent() -> Iterator[Agent]:
    with Agent.running("image_mb_per_member = 16\nvm_memory_mb_per_member = 300\n"
                       "cpu_percent_per_member = 150\n") as running:
        yield running


def test_a_members_images_and_image_nodes_count_in_their_share(strict_agent: Agent, users, readable_dir, scratch,
                                                                stores):
    a = users["a"].pw_name
    archive = scratch / "large.tar"
    copy_image(TOOLBOX, f"oci-archive:{archive}:large/toolbox:1")
    archive = given(archive, users["a"], readable_dir / "a")
    mib = archive.stat().st_size >> 20
    refused = strict_agent.vtopo(a, "image", "load", str(archive))
    assert refused.returncode == 1 and refused.stderr.strip() == (
        f"error: the archive has {mib:,} MiB, more than the 16 MiB a member's images may take (image_mb_per_member)")
    assert not os.path.exists(image_store.layout_of(users["a"].pw_uid)), "refused before anything was written"

    before = snapshot()
    memory = image_lab("quota-memory", {"t1": TOOLBOX})
    memory.node_named("t1").settings["memory_mb"] = 512  # type: ignore[union-attr]
    refused = strict_agent.vtopo(a, "deploy", str(lab_file(memory, users["a"], readable_dir)))
    assert refused.stderr.strip() == (
        f"error: lab quota-memory's VMs and image nodes take 512 MiB and {a}'s other ones 0 MiB: more than the 300 "
        f"MiB one member may have (vm_memory_mb_per_member); give them less memory, destroy a lab first, or ask an "
        f"administrator to raise it in {strict_agent.config_file}")
    cpu = image_lab("quota-cpu", {f"t{number}": TOOLBOX for number in range(1, 9)})
    refused = strict_agent.vtopo(a, "deploy", str(lab_file(cpu, users["a"], readable_dir)))
    assert refused.stderr.strip() == (
        f"error: lab quota-cpu's VMs and image nodes may take 160% of a CPU and {a}'s other ones 0%: more than the "
        f"150% one member may have (cpu_percent_per_member); give them less CPU, destroy a lab first, or ask an "
        f"administrator to raise it in {strict_agent.config_file}")
    assert snapshot() - before == {}


class Zeros(io.RawIOBase):
    """`size` zero bytes, read as a file."""

    def __init__(self, size: int):
        super().__init__()
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        size = min(len(buffer), self.left)
        buffer[:size] = bytes(size)
        self.left -= size
        return size


def add(layer: tarfile.TarFile, name: str, size: int = 0, kind: bytes = tarfile.REGTYPE) -> None:
    entry = tarfile.TarInfo(name)
    entry.type, entry.size, entry.mode = kind, size, 0o755
    layer.addfile(entry, Zeros(size) if size else None)


def busybox_with(padding: int) -> Callable[[tarfile.TarFile], None]:
    """A layer of the host's static busybox, an /etc, and `padding` bytes of zeros."""
    def entries(layer: tarfile.TarFile) -> None:
        add(layer, "etc", kind=tarfile.DIRTYPE)
        layer.add("/bin/busybox", "bin/busybox")
        add(layer, "padding", padding)
    return entries


def archive_of_layer(scratch: Path, reference: str, entries: Callable[[tarfile.TarFile], None]) -> Path:
    """An OCI archive of one gzip layer, written by `entries`, running busybox's sleep: as small as a hostile author
    makes it."""
    name = re.sub("[/:]", "-", reference)
    layer, layout, archive = scratch / f"{name}.layer", scratch / f"{name}.layout", scratch / f"{name}.tar"
    with tarfile.open(layer, "w", format=tarfile.PAX_FORMAT) as tar:
        entries(tar)
    image = f"{layout}:image"
    for argv in (["init", "--layout", str(layout)], ["new", "--image", image], ["raw", "add-layer", "--image", image,
                                                                                  str(layer)],
                 ["config", "--image", image, "--config.cmd", "/bin/busybox", "--config.cmd", "sleep",
                  "--config.cmd", "infinity"]):
        subprocess.run(["umoci", *argv], check=True, capture_output=True)
    subprocess.run(["skopeo", "copy", "--quiet", f"oci:{image}", f"oci-archive:{archive}:{reference}"], check=True)
    layer.unlink()
    shutil.rmtree(layout)
    return archive


def zeros(layer: tarfile.TarFile) -> None:
    add(layer, "zeros", 64 << 20)


def empty_files(layer: tarfile.TarFile) -> None:
    for number in range(6000):
        add(layer, f"files/{number:0100}")


def deep_paths(layer: tarfile.TarFile) -> None:
    for tree in range(8):
        add(layer, "/".join(f"{tree}{level}" for level in range(500)) + "/file")


def test_an_image_that_unpacks_past_the_share_is_refused_when_loaded(strict_agent: Agent, users, readable_dir,
                                                                      scratch, stores):
    a, store = users["a"].pw_name, Path(image_store.layout_of(users["a"].pw_uid))
    for bomb in (zeros, empty_files, deep_paths):
        reference = f"bomb/{bomb.__name__.replace('_', '-')}:1"
        archive = given(archive_of_layer(scratch, reference, bomb), users["a"], readable_dir / "a")
        assert archive.stat().st_size < 1 << 20, "the archive itself is well within the share"
        refused = strict_agent.vtopo(a, "image", "load", str(archive))
        assert refused.returncode == 1 and refused.stderr.strip().startswith(f"error: image {reference} unpacked "
                                                                             "takes more than the "), refused.stderr
        assert refused.stderr.strip().endswith("of the 16 MiB a member's images may take (image_mb_per_member): "
                                               "`vtopo image rm` one, or destroy a lab of yours first"), refused.stderr
        assert reference not in strict_agent.vtopo(a, "image", "list").stdout
        assert list((store / "blobs" / "sha256").iterdir()) == [], f"{reference} left blobs in the store"
        assert not os.path.exists(f"{image_store.STORE}/rootfs/{users['a'].pw_uid}")


def test_a_node_whose_image_would_unpack_past_the_share_is_refused(strict_agent: Agent, users, readable_dir,
                                                                   scratch, stores):
    a = users["a"].pw_name
    for reference in ("pad/a:1", "pad/b:1"):
        archive = given(archive_of_layer(scratch, reference, busybox_with((6 << 20) + len(reference))), users["a"],
                        readable_dir / "a")
        loaded = strict_agent.vtopo(a, "image", "load", str(archive))
        assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    topology = image_lab("unpacked-share", {"t1": "pad/a:1", "t2": "pad/b:1"})
    before, engine_before = snapshot(), engine_leftovers()
    refused = strict_agent.vtopo(a, "deploy", str(lab_file(topology, users["a"], readable_dir)))
    assert refused.returncode != 0, refused.stdout + refused.stderr
    lines = [line for line in (refused.stdout + refused.stderr).splitlines() if "unpacked takes more than" in line]
    assert len(lines) == 1 and re.search(r"node (t1: image pad/a|t2: image pad/b):1 unpacked takes more than the \d+ "
                                         r"MiB left of the 16 MiB", lines[0]), refused.stdout + refused.stderr
    assert engine_leftovers() == engine_before
    assert snapshot() - before == {}
    assert not os.path.exists(f"{image_store.STORE}/rootfs/{users['a'].pw_uid}"), "the unpacked image went too"


@pytest.fixture
def passing_users() -> Iterator[dict[str, str]]:
    """Two names for users the test makes and removes: one who leaves, and one given the uid they leave."""
    names = {"gone": "vtopo-test-gone", "heir": "vtopo-test-heir"}
    for name in names.values():
        subprocess.run(["userdel", name], capture_output=True)  # left by an interrupted run
    yield names
    for name in names.values():
        subprocess.run(["userdel", name], capture_output=True)


def test_a_members_store_goes_with_them_and_no_later_user_of_their_uid_gets_it(agent: Agent, passing_users,
                                                                             readable_dir, scratch):
    gone, heir = passing_users["gone"], passing_users["heir"]
    account = ["--no-create-home", "--no-user-group", "--shell", "/bin/sh", "-G", "vtopo"]
    subprocess.run(["useradd", *account, gone], check=True, capture_output=True)
    uid = pwd.getpwnam(gone).pw_uid
    try:
        theirs = given(archive_of_layer(scratch, "theirs/only:1", busybox_with(0)), pwd.getpwnam(gone),
                       readable_dir / "gone")
        loaded = agent.vtopo(gone, "image", "load", str(theirs))
        assert loaded.returncode == 0, loaded.stdout + loaded.stderr
        digest = loaded.stdout.split()[2]
        subprocess.run(["userdel", gone], check=True, capture_output=True)
        subprocess.run(["useradd", *account, "--uid", str(uid), heir], check=True, capture_output=True)

        assert "theirs/only:1" not in agent.vtopo(heir, "image", "list").stdout
        assert "theirs/only:1" not in agent.vtopo(None, "image", "list").stdout
        topology = image_lab("inherited", {"t1": "theirs/only:1"})
        refused = agent.vtopo(heir, "deploy", str(lab_file(topology, pwd.getpwnam(heir), readable_dir)))
        assert refused.returncode != 0 and "image theirs/only:1 is not on this host" in refused.stdout + \
            refused.stderr, refused.stdout + refused.stderr
        own = given(archive_of_layer(scratch, "heirs/own:1", busybox_with(1)), pwd.getpwnam(heir), readable_dir / "h")
        loaded = agent.vtopo(heir, "image", "load", str(own))
        assert loaded.returncode == 0, loaded.stdout + loaded.stderr
        listed = agent.vtopo(heir, "image", "list").stdout
        assert "heirs/own:1" in listed and "theirs/only:1" not in listed, listed
        blobs = {path.name for path in Path(image_store.layout_of(uid), "blobs", "sha256").iterdir()}
        assert digest.removeprefix("sha256:") not in blobs, "the store the first user left was removed"

        subprocess.run(["gpasswd", "--delete", heir, "vtopo"], check=True, capture_output=True)
        cleaned = agent.vtopo(None, "cleanup")
        assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
        assert f"image store of uid {uid} (loaded by {heir}, no longer a member)" in cleaned.stdout, cleaned.stdout
        assert not os.path.exists(image_store.layout_of(uid))
        assert not os.path.exists(f"{image_store.MEMBER_STORES}/{uid}.json")
    finally:
        forget_store(uid)
