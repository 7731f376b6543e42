"""A measurement's child process keeps a bounded part of what it prints, and writes none of it to a disk."""
from __future__ import annotations

import os
import tempfile

from vtopo.measure.process import OUTPUT_BYTES, Child, run_quick

PRINTED = 200 << 20


def used_bytes(path: str) -> int:
    """The bytes in use on the filesystem of `path`."""
    stats = os.statvfs(path)
    return (stats.f_blocks - stats.f_bfree) * stats.f_frsize


def test_a_command_printing_200_mib_ends_with_the_bounded_part_and_leaves_tmp_as_it_was() -> None:
    temporary = tempfile.gettempdir()
    before = used_bytes(temporary)
    child = Child(["sh", "-c", f"head -c {PRINTED} /dev/zero; head -c {PRINTED} /dev/zero >&2"],
                  what="a flood", lines=False)
    try:
        assert child.wait(60) == 0
        out, err = child.output()
        grown = used_bytes(temporary) - before
    finally:
        child.close()
    assert (len(out), len(err)) == (OUTPUT_BYTES, OUTPUT_BYTES)
    assert set(out) == set(err) == {"\0"}
    assert grown < 32 << 20, f"{temporary} grew by {grown:,} bytes while the command printed {2 * PRINTED:,}"


def test_a_probe_reads_its_whole_short_output() -> None:
    done = run_quick(["sh", "-c", "echo out; echo err >&2; exit 3"])
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err\n")
