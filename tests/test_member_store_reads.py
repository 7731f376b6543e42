"""What root reads of a member's image store is a member's file, which root opens and nobody parses: `index.json`
through a symlink, as a FIFO, too large, nested 100,000 deep or naming a digest that is a path gives nothing, only
well-formed references and digests are kept, root's own process parses none of it, and no other process of nobody's
(another member's reader) can trace the reader or read its memory. And a program an image lacks is named in one line
with its node, from what a shell or nsenter says."""
from __future__ import annotations

import fcntl
import json
import os
import pwd
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vtopo import oci_layouts
from vtopo.host import image_store
from vtopo.measure.nodes import not_installed
from vtopo.oci_layouts import REF_ANNOTATION
from vtopo.privileges import drop_privileges

pytestmark = pytest.mark.privileged  # the store's files are nobody's, read by root and handed to nobody

DIGEST = "sha256:" + "ab" * 32
NOBODY = pwd.getpwnam("nobody").pw_uid  # the store's owner here
AS_NOBODY = drop_privileges(str(NOBODY), (), str(pwd.getpwnam("nobody").pw_gid))


def index(*manifests: tuple[str, str]) -> str:
    return json.dumps({"manifests": [{"digest": digest, "annotations": {REF_ANNOTATION: reference}}
                                     for reference, digest in manifests]})


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(image_store, "STORE", str(tmp_path / "oci"))
    monkeypatch.setattr(image_store, "MEMBER_STORES", str(tmp_path / "members"))
    (tmp_path / "members" / str(NOBODY)).mkdir(parents=True)
    (tmp_path / "members" / f"{NOBODY}.json").write_text(json.dumps({"user": "nobody", "share_bytes": 1 << 30}))
    return tmp_path / "members" / str(NOBODY)


def write(path: Path, text: str) -> None:
    """A file of the store's owner's."""
    path.write_text(text)
    os.chown(path, NOBODY, NOBODY)


def test_only_well_formed_references_and_digests_are_read(store: Path) -> None:
    write(store / "index.json", index(("mine:1", DIGEST), ("up:1", "sha256:../../../etc"), ("bad\nline:1", DIGEST),
                                      ("x:1", "md5:00")))
    assert image_store.resolve("mine:1", NOBODY) == image_store.StoredImage("mine:1", DIGEST, NOBODY)
    assert [image.reference for image in image_store.images(NOBODY)] == ["mine:1"]


def test_root_parses_nothing_of_a_members_index(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(store / "index.json", index(("mine:1", DIGEST)))

    def refused(*_: object) -> object:
        raise AssertionError("root's own process parsed a member's file")

    for module, parser in ((image_store, "read_json"), (image_store, "tags_of"), (oci_layouts, "document"),
                           (oci_layouts, "tags_of")):
        monkeypatch.setattr(module, parser, refused)
    assert image_store.resolve("mine:1", NOBODY) == image_store.StoredImage("mine:1", DIGEST, NOBODY)


@pytest.mark.parametrize("planted", ["symlink", "fifo", "large", "garbage", "nested", "root's"])
def test_an_index_that_is_not_a_plain_small_json_file_gives_no_image(store: Path, tmp_path: Path,
                                                                     planted: str) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(index(("mine:1", DIGEST)))
    if planted == "symlink":
        (store / "index.json").symlink_to(target)
    elif planted == "fifo":
        os.mkfifo(store / "index.json")  # opened without waiting for a writer
    elif planted == "large":
        write(store / "index.json", index(("mine:1", DIGEST)) + " " * oci_layouts.DOCUMENT_BYTES)
    elif planted == "garbage":
        write(store / "index.json", '{"manifests": [1, {"annotations": []}, null]}')
    elif planted == "nested":
        write(store / "index.json", "[" * 100_000 + "]" * 100_000)
    else:  # a file of another user's (root's) under the member's name
        (store / "index.json").write_text(index(("mine:1", DIGEST)))
    assert image_store.images(NOBODY) == []


ATTACH = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
attached = libc.ptrace(16, int(sys.argv[1]), 0, 0) == 0  # PTRACE_ATTACH, as another reader run as nobody would
tried = [attached]
for path in ("mem", "fd/0", "environ"):
    try:
        os.close(os.open(f"/proc/{sys.argv[1]}/{path}", os.O_RDONLY))
        tried.append(True)
    except OSError:
        tried.append(False)
print(tried)
"""


def as_nobody_reaching(pid: int) -> str:
    """What a process of nobody's reaches of process `pid`: [traced, its memory, its input, its environment]."""
    return subprocess.run([*AS_NOBODY, sys.executable, "-c", ATTACH, str(pid)], capture_output=True, text=True,
                          check=True, timeout=30).stdout.strip()


def test_a_reader_run_as_nobody_is_out_of_reach_of_another_process_of_nobodys(store: Path) -> None:
    write(store / "index.json", index(*((f"image{number}:{'v' * 100}", DIGEST) for number in range(100))))
    said, answer = os.pipe()
    fcntl.fcntl(answer, fcntl.F_SETPIPE_SZ, 4096)  # the reader's answer (over 4 KiB) blocks it, mid-write
    index_fd = os.open(store / "index.json", os.O_RDONLY)
    reader = subprocess.Popen(image_store.reader_as_nobody([(index_fd, "")], "tags"), stdout=answer,
                              stdin=subprocess.DEVNULL, pass_fds=[index_fd])
    plain = subprocess.Popen([*AS_NOBODY, "sleep", "60"], stdin=subprocess.DEVNULL)
    os.close(index_fd)
    os.close(answer)
    try:
        deadline = time.monotonic() + 30
        while int.from_bytes(fcntl.ioctl(said, 0x541B, b"\0" * 4), "little") < 4096:  # FIONREAD: the pipe is full
            assert time.monotonic() < deadline, "the reader never answered"
            time.sleep(0.01)
        time.sleep(0.1)
        assert as_nobody_reaching(plain.pid) == "[True, True, True, True]"  # the attack works on a plain process
        assert as_nobody_reaching(reader.pid) == "[False, False, False, False]"
    finally:
        plain.kill()
        plain.wait()
        os.kill(reader.pid, signal.SIGCONT)  # an attach that worked left it stopped
        with os.fdopen(said, "rb") as rest:
            assert json.loads(rest.read())["tags"]
        reader.wait(timeout=30)


def test_a_program_an_image_lacks_is_one_line_naming_the_node() -> None:
    for said in ("sh: 1: iperf3: not found", "nsenter: failed to execute iperf3: No such file or directory",
                 "bash: iperf3: command not found"):
        assert not_installed("t2", "iperf3", said).startswith("t2 has no iperf3: "), said
    assert not_installed("t2", "/usr/bin/python3", "nsenter: failed to execute python3: No such file or directory")
    assert not_installed("t2", "iperf3", "iperf3: error - unable to connect to server") == ""
