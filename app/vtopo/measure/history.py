"""A lab's iperf3 run history: a JSON file in the user's data directory (vtopo.user_data), and CSV for spreadsheets."""
from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable
from pathlib import Path

from vtopo import user_data
from vtopo.measure.results import RunResult
from vtopo.model import untrusted_json
from vtopo.model.io import write_atomically
from vtopo.model.problems import LabError

HISTORY_FORMAT = "vtopo-measure-history"
HISTORY_VERSION = 1


def history_path(lab_name: str) -> Path:
    """Where the history of the lab named `lab_name` lives: LAB.measure.json in the user's data directory, whoever
    deployed the lab and wherever its file is."""
    return user_data.folder(user_data.HISTORIES) / f"{user_data.file_stem(lab_name)}.measure.json"


def dump_history(results: Iterable[RunResult]) -> str:
    document = {
        "format": HISTORY_FORMAT,
        "version": HISTORY_VERSION,
        "runs": [untrusted_json.readable(r.to_dict()) for r in results],  # tools' error texts can hold tabs
    }
    return json.dumps(document, indent=1)


def parse_history(text: str, *, source: str = "history") -> list[RunResult]:
    """The runs in a history file's text. A history is someone else's file as much as a lab is: whatever it
    holds, the only exception is a ValueError that names the source and what is wrong."""
    try:
        document = untrusted_json.parse(text, multiline=lambda path: True)  # error texts span lines
    except LabError as error:
        raise ValueError(f"{source}: {error.problems[0].path}: {error.problems[0].message}") from None
    if isinstance(document, list):  # a bare list of runs is accepted too
        runs = document
    elif isinstance(document, dict) and document.get("format") == HISTORY_FORMAT:
        version = document.get("version", 0)
        if not isinstance(version, int) or isinstance(version, bool) or version < 0:
            raise ValueError(f"{source}: the history version must be a whole number, not {json.dumps(version)}")
        if version > HISTORY_VERSION:
            raise ValueError(f"{source}: history version {version} is newer than this vtopo reads")
        runs = document.get("runs", [])
        if not isinstance(runs, list):
            raise ValueError(f"{source}: \"runs\" must be a list of runs")
    else:
        raise ValueError(f"{source}: not a vtopo measurement history")
    results = []
    for index, run in enumerate(runs):
        try:
            results.append(RunResult.from_dict(run))
        except ValueError as e:
            raise ValueError(f"{source}: run {index + 1} is malformed: {e}") from e
    return results


def save_history(path: str | os.PathLike[str], results: Iterable[RunResult]) -> None:
    """Write the history, private to the user when the file is new, making its folder if it is missing."""
    target = Path(path)
    user_data.make_directory(target.parent)
    write_atomically(target, dump_history(results), user_data.PRIVATE_FILE)


def load_history(path: str | os.PathLike[str]) -> list[RunResult]:
    """The runs saved at `path`; an empty list if there is no file yet."""
    target = Path(path)
    if not target.exists():
        return []
    try:
        text = target.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{target}: not a vtopo measurement history (the file is not UTF-8 text)") from None
    return parse_history(text, source=str(target))


def history_csv(results: Iterable[RunResult]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(RunResult.CSV_HEADER)
    for r in results:
        writer.writerow(r.csv_row())
    return out.getvalue()
