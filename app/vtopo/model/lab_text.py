"""A lab file's text, read and glanced at without building the lab: what `vtopo deploy` needs before it hands the text
to the agent, which reads the lab itself (vtopo.model.io loads the whole model, 30 ms of the command's start)."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from vtopo.model.problems import LabError, Problem
from vtopo.model.untrusted_json import MAX_BYTES


def read_text(path: Path) -> str:
    """A lab file's text: a regular file of at most MAX_BYTES (a FIFO or /dev/zero would never end), in UTF-8."""
    try:
        with path.open("rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                raise LabError([Problem(f"{path} is not a regular file")])
            data = file.read(MAX_BYTES + 1)
        return data.decode("utf-8")
    except FileNotFoundError:
        raise LabError([Problem(f"no such file: {path}")]) from None
    except OSError as exc:
        raise LabError([Problem(f"cannot read {path}: {exc.strerror or exc}")]) from None
    except UnicodeDecodeError as exc:
        raise LabError([Problem(f"the file is not UTF-8 text (byte {exc.start} cannot be decoded)", path="$")]) \
            from None


def declares_sites(text: str) -> bool:
    """Whether a lab document's text may place nodes on other sites (it declares sites, or it is not one the plain
    reading here understands): read without building the lab, which a lab with no sites leaves to the one that deploys
    it."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):  # the full reading says what is wrong, naming the field
        return True
    lab = document.get("lab") if isinstance(document, dict) else None
    return not isinstance(lab, dict) or bool(lab.get("sites"))
