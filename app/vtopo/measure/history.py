"""A lab's iperf3 run history: a JSON file beside the lab, and CSV for spreadsheets."""
from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from vtopo.measure.results import RunResult

HISTORY_FORMAT = "vtopo-measure-history"
HISTORY_VERSION = 1


def history_path_for(lab_file: str | os.PathLike[str]) -> Path:
    """Where a lab's history lives: `lab.vtopo` -> `lab.measure.json` in the same folder."""
    lab = Path(lab_file)
    return lab.with_name(lab.stem + ".measure.json")


def dump_history(results: Iterable[RunResult]) -> str:
    document = {
        "format": HISTORY_FORMAT,
        "version": HISTORY_VERSION,
        "runs": [r.to_dict() for r in results],
    }
    return json.dumps(document, indent=1)


def parse_history(text: str, *, source: str = "history") -> list[RunResult]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{source}: not JSON ({e.msg} at line {e.lineno})") from e
    if isinstance(document, list):  # a bare list of runs is accepted too
        runs = document
    elif isinstance(document, dict) and document.get("format") == HISTORY_FORMAT:
        if int(document.get("version", 0)) > HISTORY_VERSION:
            raise ValueError(f"{source}: history version {document['version']} is newer than this vtopo reads")
        runs = document.get("runs", [])
    else:
        raise ValueError(f"{source}: not a vtopo measurement history")
    results = []
    for index, run in enumerate(runs):
        try:
            results.append(RunResult.from_dict(run))
        except (TypeError, KeyError, ValueError) as e:
            raise ValueError(f"{source}: run {index + 1} is malformed: {e}") from e
    return results


def save_history(path: str | os.PathLike[str], results: Iterable[RunResult]) -> None:
    """Write atomically (a temporary file renamed over the old one)."""
    target = Path(path)
    text = dump_history(results)
    fd, tmp = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise


def load_history(path: str | os.PathLike[str]) -> list[RunResult]:
    """The runs saved at `path`; an empty list if there is no file yet."""
    target = Path(path)
    if not target.exists():
        return []
    return parse_history(target.read_text(encoding="utf-8"), source=str(target))


def history_csv(results: Iterable[RunResult]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(RunResult.CSV_HEADER)
    for r in results:
        writer.writerow(r.csv_row())
    return out.getvalue()
