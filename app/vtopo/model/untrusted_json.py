"""JSON from a file someone else wrote: limited in size and depth, finite numbers, clean strings, unique keys.

`parse` returns plain dicts, lists, strings, numbers, booleans and None, or raises LabError naming the JSON path of
every problem. Nothing a file holds makes it raise anything else.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable

from vtopo.model.problems import LabError, Problem

MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 32
MAX_MAGNITUDE = 2**53  # past this a JSON number loses precision in most readers; no lab field is near it
_MAX_DIGITS = 20  # longer integer literals are refused before Python converts them (10**4000 takes a while)
_LONG_NUMBER = re.compile(rf"\d{{{_MAX_DIGITS + 1},}}")  # the same in text: a port's index, an OpenFlow port
# C0 and C1 controls, DEL, lone surrogates, line and paragraph separators, and the bidi overrides that make text
# display in another order than it runs ("Trojan source")
_FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_SUSPECT = re.compile(f"{_FORBIDDEN.pattern}|{_LONG_NUMBER.pattern}")  # either: then each is looked for
_NAMES = {"\n": "a newline", "\t": "a tab", "\r": "a carriage return", "\x00": "a NUL character",
          "\x1b": "an escape character"}


def readable(value: Any) -> Any:
    """`value` (JSON data) with every character `parse` refuses in text, newlines apart, made a space: for writing
    a file of our own that `parse` will read back."""
    if isinstance(value, str):
        return _FORBIDDEN.sub(lambda match: match.group() if match.group() == "\n" else " ", value)
    if isinstance(value, dict):
        return {readable(key): readable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [readable(item) for item in value]
    return value


@dataclass(frozen=True)
class _BadNumber:
    """A number the reader refuses, kept as its text for the problem that names it."""

    text: str


class _Object(dict[str, Any]):
    """An object as parsed, remembering the keys the file wrote more than once."""

    duplicates: list[str]


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    result = _Object()
    result.duplicates = []
    for key, value in pairs:
        if key in result:
            result.duplicates.append(key)
        result[key] = value
    return result


def _integer(text: str) -> int | _BadNumber:
    return int(text) if len(text) <= _MAX_DIGITS else _BadNumber(text)


def _real(text: str) -> float | _BadNumber:
    value = float(text)
    return value if math.isfinite(value) else _BadNumber(text)


def child_path(path: str, key: str) -> str:
    return f"{path}.{key}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) else f"{path}[{json.dumps(key)}]"


def _problem_with(char: str, what: str) -> str:
    if "\ud800" <= char <= "\udfff":
        return f"this {what} is not valid Unicode: it holds a lone surrogate (U+{ord(char):04X})"
    name = _NAMES.get(char, f"the control character U+{ord(char):04X}")
    return f"this {what} holds {name}; lab files allow no control characters (only notes and configuration texts may hold newlines)"


def _written(path: Any) -> str:
    """A value's path as a problem names it ($.nodes[3].name), from "$" or (its object's or list's path, its key or
    index): written out only when it is named (a problem, or a text that may hold newlines), as a lab of thousands of
    nodes holds tens of thousands of values."""
    steps: list[str | int] = []
    while isinstance(path, tuple):
        path, step = path
        steps.append(step)
    for step in reversed(steps):
        path = f"{path}[{step}]" if isinstance(step, int) else child_path(path, step)
    return str(path)


class _Scanner:
    def __init__(self, multiline: Callable[[str], bool]) -> None:
        self.multiline = multiline
        self.problems: list[Problem] = []

    def fail(self, path: Any, message: str) -> None:
        self.problems.append(Problem(message, path=_written(path)))

    def text(self, value: str, path: Any, what: str) -> None:
        if _SUSPECT.search(value) is None:  # most texts: nothing to look at more closely
            return
        prose = what == "value" and self.multiline(_written(path))  # notes: nothing reads a number out of them
        for match in _FORBIDDEN.finditer(value):
            if not (prose and match.group() == "\n"):
                self.fail(path, _problem_with(match.group(), what))
                return
        if not prose and (number := _LONG_NUMBER.search(value)):
            self.fail(path, f"this {what} holds a number of {len(number.group()):,} digits; numbers in a lab file "
                      f"have at most {_MAX_DIGITS}")

    def clean(self, value: Any, path: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            self.fail(path, f"lists and objects are nested more than {MAX_DEPTH} levels deep here")
            return None
        if isinstance(value, _BadNumber):
            self.fail(path, f"{value.text[:24]}{'...' if len(value.text) > 24 else ''} is not a usable number: "
                      f"numbers must be finite and at most {MAX_MAGNITUDE:,} in size")
            return None
        if isinstance(value, float) and not math.isfinite(value):
            self.fail(path, f"{value} is not a usable number: numbers must be finite")
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) > MAX_MAGNITUDE:
            shown = f"{value:.3g}" if isinstance(value, float) else f"{str(value)[:24]}..."  # a YAML integer's digits
            self.fail(path, f"{shown} is too large: numbers must be at most {MAX_MAGNITUDE:,} in size")
            return None
        if isinstance(value, str):
            self.text(value, path, "value")
            return value
        if isinstance(value, list):
            return [self.clean(item, (path, index), depth + 1) for index, item in enumerate(value)]
        if isinstance(value, dict):
            for key in dict.fromkeys(getattr(value, "duplicates", ())):
                self.fail((path, key), f"the key {key!r} is written more than once in this object; "
                          "which one counts is ambiguous")
            result = {}
            for key, item in value.items():
                self.text(key, (path, key), "key")
                result[key] = self.clean(item, (path, key), depth + 1)
            return result
        return value


def parse(text: str, multiline: Callable[[str], bool] = lambda path: False) -> Any:
    """Parse untrusted JSON text. `multiline(path)` says which string values may hold newlines (notes)."""
    if len(text) > MAX_BYTES:
        raise LabError([Problem(f"the file is larger than {MAX_BYTES // 1024 // 1024} MiB; no lab is that big",
                                path="$")])
    try:
        raw = json.loads(text, object_pairs_hook=_object, parse_int=_integer, parse_float=_real,
                         parse_constant=_BadNumber)
    except json.JSONDecodeError as exc:
        ending = "the file ends too early, it looks truncated" if exc.pos >= len(text.rstrip()) - 1 or \
            exc.msg.startswith("Unterminated") else "it may have been edited by hand"
        raise LabError([Problem(f"not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno}); {ending}",
                                path="$")]) from None
    except RecursionError:
        raise LabError([Problem(f"lists and objects are nested far more than {MAX_DEPTH} levels deep", path="$")]
                       ) from None
    return checked(raw, multiline)


def checked(raw: Any, multiline: Callable[[str], bool] = lambda path: False) -> Any:
    """Data parsed from an untrusted file (JSON here, or YAML), checked as `parse` checks it: nesting, numbers,
    text and keys written twice (an object that has a `duplicates` list of them)."""
    scanner = _Scanner(multiline)
    document = scanner.clean(raw, "$", 0)
    if scanner.problems:
        raise LabError(scanner.problems)
    return document
