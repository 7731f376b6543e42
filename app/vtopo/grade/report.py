"""The grades as a table: CSV, one row per submission and a column per check, and an HTML report with each check's
result and diagnosis per student. Whatever a submission wrote is escaped (HTML) or kept from being read as a formula
(CSV)."""
from __future__ import annotations

import csv
import html
import io as text_io

from vtopo.grade.grader import Graded
from vtopo.model.topology import Topology

PASS, FAIL, ERROR = "pass", "fail", "error"
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet would read as the start of a formula in a cell (OWASP's list for CSV injection)."""


def result_of(graded: Graded, index: int) -> str:
    """pass or fail for a check that ran; error for one that could not be asked, or a submission not deployed."""
    if not graded.outcomes:
        return ERROR
    outcome = graded.outcomes[index]
    return PASS if outcome.passed else FAIL if outcome.answered else ERROR


def total_of(graded: Graded, checks: int) -> str:
    return f"{graded.passed}/{checks}"


def _cell(text: str) -> str:
    return f"'{text}" if text.startswith(FORMULA_START) else text


def to_csv(assignment: Topology, grades: list[Graded]) -> str:
    out = text_io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    names = [check.name for check in assignment.checks]
    writer.writerow(["student", "file", *names, "total", "note"])
    for graded in grades:
        submission = graded.submission
        writer.writerow([_cell(submission.student), _cell(str(submission.path)),
                         *(result_of(graded, index) for index in range(len(names))),
                         total_of(graded, len(names)), _cell(graded.why_not)])
    return out.getvalue()


STYLE = """body { font-family: sans-serif; margin: 2em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #bbb; padding: 0.3em 0.6em; vertical-align: top; text-align: left; }
td.pass { background: #dfd; } td.fail { background: #fdd; } td.error { background: #eee; }
.why { font-size: 0.85em; color: #333; white-space: pre-wrap; }"""


def to_html(assignment: Topology, grades: list[Graded]) -> str:
    e = html.escape
    checks = assignment.checks
    head = "".join(f'<th title="{e(check.explain)}">{e(check.name)}</th>' for check in checks)
    rows = []
    for graded in grades:
        cells = []
        for index in range(len(checks)):
            result = result_of(graded, index)
            why = graded.outcomes[index].verdict.why if graded.outcomes else graded.why_not
            cells.append(f'<td class="{result}">{result}<div class="why">{e(why)}</div></td>')
        rows.append(f"<tr><th>{e(graded.submission.student)}</th>{''.join(cells)}"
                    f"<td>{total_of(graded, len(checks))}</td></tr>")
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Grades: {e(assignment.name)}</title>'
            f"<style>{STYLE}</style></head>\n<body><h1>Grades: {e(assignment.name)}</h1>\n"
            f"<table><tr><th>student</th>{head}<th>total</th></tr>\n" + "\n".join(rows) + "\n</table></body></html>\n")
