"""The kinds' entry points are kept in the user's cache between commands, under a stamp of the installed
distributions: a command finds them there without importlib.metadata, a distribution installed or changed since is
found all the same, and a cache that someone else could have written is never read (it names modules to import)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CACHE = Path("vtopo") / "kind-entry-points.json"
PLANTED = ["planted", "vtopo_kinds.container:ContainerKind"]


def kinds_found(cache_home: Path, site: Path) -> tuple[list[str], bool]:
    """The kinds a fresh `vtopo` finds, with `site` on its path, and whether it loaded importlib.metadata for it."""
    code = ("import sys\nfrom vtopo.kinds.registry import load_registry\n"
            "print(' '.join(load_registry().names()), 'importlib.metadata' in sys.modules)")
    path = os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=site,
                            env={**os.environ, "XDG_CACHE_HOME": str(cache_home), "PYTHONPATH": path})
    *names, scanned = result.stdout.split()
    return names, scanned == "True"


def install(site: Path, distribution: str, kind: str) -> Path:
    """A distribution in `site` whose entry point makes the kind `kind` (a container, under another name)."""
    info = site / f"{distribution}-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
    points = info / "entry_points.txt"
    points.write_text(f"[vtopo.kinds]\n{kind} = vtopo_kinds.container:ContainerKind\n")
    return points


def test_a_second_command_reads_the_kinds_from_the_cache(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    first, scanned = kinds_found(tmp_path, site)
    assert "container" in first and "router" in first and scanned
    assert kinds_found(tmp_path, site) == (first, False)
    assert (tmp_path / CACHE).stat().st_mode & 0o777 == 0o600
    assert (tmp_path / CACHE.parent).stat().st_mode & 0o777 == 0o700


def test_a_distribution_installed_or_changed_since_is_found(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    before, _ = kinds_found(tmp_path, site)
    points = install(site, "extra_kinds", "gadget")
    after, scanned = kinds_found(tmp_path, site)
    assert after == sorted([*before, "gadget"]) and scanned
    points.write_text(points.read_text().replace("gadget", "widget"))
    os.utime(points, ns=(points.stat().st_atime_ns, points.stat().st_mtime_ns + 1_000_000_000))  # a second later
    assert kinds_found(tmp_path, site) == (sorted([*before, "widget"]), True)


def test_a_cache_someone_else_could_write_is_not_read(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    kinds_found(tmp_path, site)
    cache = tmp_path / CACHE
    planted = json.loads(cache.read_text())
    planted["entry_points"].append(PLANTED)
    cache.write_text(json.dumps(planted))
    assert "planted" in kinds_found(tmp_path, site)[0]  # the user's own: read
    others = [(0o620, os.geteuid(), 0o700), (0o600, os.geteuid(), 0o777)]
    if os.geteuid() == 0:  # a file of nobody's, which only root can make
        others.append((0o600, 65534, 0o700))
    for mode, owner, folder_mode in others:
        cache.write_text(json.dumps(planted))
        cache.chmod(mode)
        os.chown(cache, owner, -1)
        cache.parent.chmod(folder_mode)
        names, scanned = kinds_found(tmp_path, site)
        assert "planted" not in names and scanned, (oct(mode), owner, oct(folder_mode))
