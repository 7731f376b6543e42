"""Node settings declared as dataclasses. Field metadata drives validation, the CLI and the GUI inspector."""
from __future__ import annotations

import dataclasses
import functools
import typing
from dataclasses import dataclass, field
from typing import Any

from vtopo.model.problems import Problem


@dataclass(frozen=True)
class SettingInfo:
    """What the designer and the checks show of a setting, and the values it takes."""

    label: str
    help: str = ""
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    multiline: bool = False  # a text of many lines (a configuration file), kept verbatim
    port_vlans: bool = False  # a switch's VLANs port by port, {port: "access 10" or "trunk 10,20 native 1"}


def setting(default: Any, label: str, help: str = "", choices: tuple[str, ...] = (), minimum: float | None = None,
            maximum: float | None = None, multiline: bool = False, port_vlans: bool = False) -> Any:
    """Declare one setting of a node kind."""
    info = SettingInfo(label=label, help=help, choices=choices, minimum=minimum, maximum=maximum, multiline=multiline,
                       port_vlans=port_vlans)
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata={"vtopo": info})
    return field(default=default, metadata={"vtopo": info})


@dataclass(frozen=True)
class SettingField:
    """A setting of a settings type: its field, default and description."""

    name: str
    type: Any
    default: Any
    info: SettingInfo


@functools.cache
def _type_hints(settings_type: type) -> dict[str, Any]:
    """Resolved once per settings class: a 2,000-node lab asks for them 6,000 times per check."""
    return typing.get_type_hints(settings_type)


def setting_fields(settings_type: type) -> list[SettingField]:
    hints = _type_hints(settings_type)
    result = []
    for f in dataclasses.fields(settings_type):
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            raise TypeError(f"setting {settings_type.__name__}.{f.name} has no default")
        result.append(SettingField(f.name, hints[f.name], default, f.metadata.get("vtopo", SettingInfo(f.name))))
    return result


@functools.cache
def _fields_by_name(settings_type: type) -> dict[str, SettingField]:
    """The fields of a settings class, once per class, for checking each node's settings: what their defaults are
    made of is not read there (a settings form makes its own, with `setting_fields`)."""
    return {f.name: f for f in setting_fields(settings_type)}


def _matches(value: Any, expected: Any) -> bool:
    origin = typing.get_origin(expected)
    if expected is bool:
        return isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if expected is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected is str:
        return isinstance(value, str)
    if origin is list:
        (item,) = typing.get_args(expected)
        return isinstance(value, list) and all(_matches(v, item) for v in value)
    if origin is dict:
        key, item = typing.get_args(expected)
        return isinstance(value, dict) and all(_matches(k, key) and _matches(v, item) for k, v in value.items())
    raise TypeError(f"unsupported setting type {expected!r}")


def _describe(expected: Any) -> str:
    origin = typing.get_origin(expected)
    if origin is list:
        return f"a list of {_describe(typing.get_args(expected)[0])}s"
    if origin is dict:
        return "an object"
    return {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}[expected]


def parse_settings(settings_type: type, raw: dict[str, Any], path: str, subject: str, subject_id: str,
                   owner: str = "this kind") -> tuple[Any, list[Problem]]:
    """Build the typed settings of a node (or the parameters of a check), or say precisely what is wrong."""
    problems: list[Problem] = []
    values: dict[str, Any] = {}
    known = _fields_by_name(settings_type)
    for key in raw:
        if key not in known:
            names = ", ".join(sorted(known)) or "none"
            problems.append(Problem(f"unknown setting {key!r} ({owner} has: {names})", subject, f"{path}.{key}", subject_id))
    for name, spec in known.items():
        if name not in raw:
            continue
        value = raw[name]
        where = f"{path}.{name}"
        label = spec.info.label  # what the designer's form calls it; `where` names the file key
        if not _matches(value, spec.type):
            problems.append(Problem(f"{label} must be {_describe(spec.type)}", subject, where, subject_id))
            continue
        if isinstance(value, str) and "\n" in value and not spec.info.multiline:
            problems.append(Problem(f"{label} must be one line", subject, where, subject_id))
            continue
        if spec.info.choices and value not in spec.info.choices:
            problems.append(Problem(f"{label} must be one of {', '.join(spec.info.choices)}, not {value!r}", subject,
                                    where, subject_id))
            continue
        if spec.info.minimum is not None and value < spec.info.minimum:
            problems.append(Problem(f"{label} must be at least {spec.info.minimum:g}", subject, where, subject_id))
            continue
        if spec.info.maximum is not None and value > spec.info.maximum:
            problems.append(Problem(f"{label} must be at most {spec.info.maximum:g}", subject, where, subject_id))
            continue
        values[name] = float(value) if spec.type is float else value
    if problems:
        return None, problems
    return settings_type(**values), []
