"""Where a user's histories and experiment outputs go: a data directory of their own, never beside a lab's file."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from vtopo.user_data import file_stem

DATA_HOME = "from vtopo.user_data import data_home; print(data_home())"


def data_home_of(as_nobody: bool, **env: str) -> str:
    """data_home() in a fresh process without VTOPO_DATA_DIR, as this user or as nobody."""
    clean = {key: value for key, value in os.environ.items() if key not in ("VTOPO_DATA_DIR", "XDG_DATA_HOME")}
    runner = ["runuser", "-u", "nobody", "--"] if as_nobody else []
    done = subprocess.run([*runner, "env", *(f"{key}={value}" for key, value in env.items()), sys.executable, "-c",
                           DATA_HOME], capture_output=True, text=True, env=clean, check=True, cwd="/")
    return done.stdout.strip()


def test_a_user_writes_to_the_xdg_data_home() -> None:
    as_nobody = os.geteuid() == 0  # a plain user runs it as themselves
    assert data_home_of(as_nobody, HOME="/home/u") == "/home/u/.local/share/vtopo"
    assert data_home_of(as_nobody, HOME="/home/u", XDG_DATA_HOME="/data/u") == "/data/u/vtopo"
    assert data_home_of(as_nobody, HOME="/home/u", XDG_DATA_HOME="relative") == "/home/u/.local/share/vtopo"


@pytest.mark.privileged  # root's data directory
def test_root_writes_to_its_own_home_not_to_the_labs_state() -> None:
    assert data_home_of(False, HOME="/root") == "/root/.local/share/vtopo"


def test_vtopo_data_dir_names_another(data_home: Path) -> None:
    assert data_home_of(False, VTOPO_DATA_DIR=str(data_home)) == str(data_home)


@pytest.mark.parametrize(("name", "stem"), [("l2-vs-l3", "l2-vs-l3"), ("../../etc/x", "_.._etc_x"), ("..", "untitled"),
                                            ("a b/c", "a_b_c"), ("", "untitled"), (".hidden", "hidden")])
def test_a_lab_name_is_one_file_name(name: str, stem: str) -> None:
    assert file_stem(name) == stem
