"""vtopo installs as what it is: a wheel built from this checkout, installed in a clean venv, knows its eight kinds,
finds its teaching labs, icons, guest recipe and systemd units inside the package, and runs from any directory.

The wheel is built offline (--no-build-isolation, with this venv's setuptools) from a copy of the checkout, so the
checkout gets no build/ or egg-info. The clean venv has no system site-packages; it gets vtopo's own dependencies,
and only those (no extra: no Qt, no libvirt-python), by a .pth file to a folder linking them from this venv, the
closure of the wheel's Requires-Dist as this venv has them installed.
"""
from __future__ import annotations

import email
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from importlib.metadata import Distribution, distribution
from pathlib import Path

import pytest
from packaging.requirements import Requirement

CHECKOUT = Path(__file__).resolve().parents[1]
SOURCES = ("app", "plugins", "resources", "topologies", "setup.cfg", "setup.py", "pyproject.toml", "README.md",
           "LICENSE")
BUILTIN = ["bridge", "container", "host", "macvlan", "macvtap", "ovs", "router", "vm"]


def build_wheel(into: Path) -> Path:
    source = into / "source"
    for name in SOURCES:
        if (CHECKOUT / name).is_dir():
            shutil.copytree(CHECKOUT / name, source / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            source.mkdir(exist_ok=True)
            shutil.copy(CHECKOUT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "--disable-pip-version-check", "-w", str(into / "dist"), str(source)], check=True)
    [wheel] = (into / "dist").glob("vtopo-*.whl")
    return wheel


def dependencies(requirements: list[str]) -> dict[str, Distribution]:
    """The installed distributions `requirements` need, without extras, and theirs, by name."""
    found: dict[str, Distribution] = {}
    pending = [Requirement(text) for text in requirements]
    while pending:
        requirement = pending.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        installed = distribution(requirement.name)
        name = installed.metadata["Name"].lower()
        if name not in found:
            found[name] = installed
            pending += [Requirement(text) for text in installed.requires or []]
    return found


def link_dependencies(wheel: Path, folder: Path) -> None:
    """Link into `folder` every top-level file and folder of the distributions the wheel needs."""
    with zipfile.ZipFile(wheel) as archive:
        metadata = email.message_from_bytes(archive.read(next(n for n in archive.namelist()
                                                              if n.endswith(".dist-info/METADATA"))))
    folder.mkdir()
    for installed in dependencies(metadata.get_all("Requires-Dist") or []).values():
        for top in {Path(str(path)).parts[0] for path in installed.files or []}:
            target = Path(str(installed.locate_file(top)))
            if target.exists() and top not in ("..", "__pycache__") and not (folder / top).exists():
                (folder / top).symlink_to(target)


@pytest.fixture(scope="module")
def clean_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(work)
    environment = work / "venv"
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(environment)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(environment), "platbase": str(environment)}))
    link_dependencies(wheel, work / "dependencies")
    (site / "dependencies.pth").write_text(f"{work / 'dependencies'}\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(environment / "bin" / "python"), "install", "-q",
                    "--no-deps", "--no-index", "--disable-pip-version-check", str(wheel)], check=True,
                   env=outside_the_checkout())  # else pip finds the checkout's vtopo on PYTHONPATH, installed already
    return environment


def outside_the_checkout() -> dict[str, str]:
    """This process's environment without what points Python at the checkout or its venv."""
    return {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}


def run(environment: Path, *argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(environment / "bin" / argv[0]), *argv[1:]], capture_output=True, text=True,
                          timeout=60, cwd=cwd, env={**outside_the_checkout(), "QT_QPA_PLATFORM": "offscreen"})


def test_the_wheel_knows_its_eight_kinds_from_another_directory(clean_venv: Path, tmp_path: Path) -> None:
    listed = run(clean_venv, "vtopo", "kinds", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[0] for line in listed.stdout.splitlines()] == BUILTIN
    where = run(clean_venv, "python", "-c", "import vtopo, vtopo_kinds; print(vtopo.__file__, vtopo_kinds.__file__)",
                cwd=tmp_path)
    assert all(path.startswith(str(clean_venv)) for path in where.stdout.split()), where.stdout + where.stderr


def test_the_shipped_files_are_package_data(clean_venv: Path, tmp_path: Path) -> None:
    shipped = run(clean_venv, "python", "-c", "from vtopo import resources as r\nfor path in (r.TOPOLOGIES, "
                  "r.icon('router.svg'), r.GUEST_RECIPE / 'build.sh', r.SYSTEMD_UNITS / 'vtopo-agent.socket'): "
                  "print(path)", cwd=tmp_path)
    paths = [Path(line) for line in shipped.stdout.splitlines()]
    assert len(paths) == 4, shipped.stderr
    assert all(path.is_relative_to(clean_venv) and path.exists() and not path.is_symlink() for path in paths)
    assert os.access(paths[2], os.X_OK), "the guest recipe keeps its executable bit"
    labs = sorted(path.name for path in paths[0].glob("*.vtopo"))
    assert labs == sorted(path.name for path in (CHECKOUT / "topologies").glob("*.vtopo"))

    for lab, shape in (("l2-vs-l3", "7 nodes, 6 links"), ("vm-router", "5 nodes, 4 links")):  # VMs without libvirt
        validated = run(clean_venv, "vtopo", "validate", str(paths[0] / f"{lab}.vtopo"), cwd=tmp_path)
        assert validated.returncode == 0 and f"valid ({shape}" in validated.stdout, validated.stderr
    assert list(tmp_path.iterdir()) == []


def test_without_the_libvirt_extra_vms_run_as_qemu_processes(clean_venv: Path, tmp_path: Path) -> None:
    probed = run(clean_venv, "python", "-c", "from vtopo.host import libvirtd\n"
                 "print(libvirtd.module_installed(), libvirtd.answers())", cwd=tmp_path)
    assert probed.stdout.split() == ["False", "False"], probed.stderr
    lab = run(clean_venv, "python", "-c", "from vtopo.resources import TOPOLOGIES; print(TOPOLOGIES)", cwd=tmp_path)
    planned = run(clean_venv, "vtopo", "plan", f"{lab.stdout.strip()}/vm-router.vtopo", cwd=tmp_path)
    assert planned.returncode == 0 and "start qemu@vmr" in planned.stdout, planned.stdout + planned.stderr
    assert "libvirt" not in planned.stdout


@pytest.mark.privileged  # a deploy, refused in its preflight: nothing is built
def test_a_lab_that_asks_for_libvirt_is_refused_naming_the_extra(clean_venv: Path, tmp_path: Path) -> None:
    lab = json.loads((CHECKOUT / "topologies" / "vm-router.vtopo").read_text())
    lab["lab"].update(name="wheel-libvirt", vm_backend="libvirt")
    (tmp_path / "wheel-libvirt.vtopo").write_text(json.dumps(lab))
    deployed = run(clean_venv, "vtopo", "deploy", "wheel-libvirt.vtopo", cwd=tmp_path)
    assert deployed.returncode == 1, deployed.stdout + deployed.stderr
    assert ("lab at $.lab.vm_backend: libvirt-python is not installed: pip install 'vtopo[libvirt]' (building it "
            "needs the Debian packages libvirt-dev, pkg-config and gcc)") in deployed.stderr
    assert "nothing was applied" in deployed.stderr


def test_the_designer_is_an_extra(clean_venv: Path, tmp_path: Path) -> None:
    helped = run(clean_venv, "vtopo", "gui", "--help", cwd=tmp_path)
    assert helped.returncode == 0 and "usage: vtopo gui" in helped.stdout, helped.stderr
    opened = run(clean_venv, "vtopo", "gui", cwd=tmp_path)
    assert opened.returncode == 1 and "pip install 'vtopo[gui]'" in opened.stderr, opened.stdout + opened.stderr


def test_without_entry_points_vtopo_knows_no_kind_and_says_why(tmp_path: Path) -> None:
    """The checkout's app/ on PYTHONPATH, and no site-packages: nothing registers a kind."""
    listed = subprocess.run([sys.executable, "-S", "-m", "vtopo", "kinds"], capture_output=True, text=True,
                            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(CHECKOUT / "app")}, timeout=60)
    assert listed.returncode == 1 and listed.stdout == ""
    assert "no node kinds are installed" in listed.stderr and "pip install ." in listed.stderr
