"""The shape of operator.yaml and params.yaml, and the check that reports every deviation from it.

A schema is a tree of `Obj` (known keys, some required), `ListOf`, `MapOf`, `Choice` and the
`Scalar` kinds. `check` walks a parsed document along it and yields one Problem per unknown
key, missing required key or value of the wrong kind; it never stops at the first.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from engine.errors import Problem
from engine.model import GenerateKind, ParamType, Strategy, TaskKind
from engine.package.durations import parse_duration
from engine.package.source import line_of

__all__ = [
    "OPERATOR",
    "PARAMS",
    "TASK_SPECS",
    "Choice",
    "ListOf",
    "MapOf",
    "Obj",
    "Scalar",
    "Spec",
    "TextOr",
    "check",
    "child_path",
]


class Scalar(StrEnum):
    """Leaf kinds; the value is the complaint when a value is not of the kind."""

    STRING = "must be a string"
    INTEGER = "must be an integer"
    COUNT = "must be an integer of at least 0"
    NUMBER = "must be a number"
    BOOLEAN = "must be true or false"
    DURATION = "must be a duration such as 90s, 10m or 1h30m"
    MAPPING = "must be a mapping"
    ANY = ""


@dataclass(frozen=True)
class Choice:
    options: tuple[str, ...]


@dataclass(frozen=True)
class ListOf:
    item: Spec
    non_empty: bool = False


@dataclass(frozen=True)
class MapOf:
    value: Spec


@dataclass(frozen=True)
class Obj:
    fields: Mapping[str, Spec]
    required: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class TextOr:
    """A string (e.g. a CEL expression) or a value of `spec`."""

    spec: Spec
    complaint: str


Spec = Obj | ListOf | MapOf | Choice | Scalar | TextOr


def child_path(path: str, key: object) -> str:
    """`tasks` + 0 -> `tasks[0]`; `tasks[0]` + `name` -> `tasks[0].name`."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def check(file: str, value: Any, spec: Spec, path: str = "", line: int | None = None) -> Iterator[Problem]:
    """Every way `value` (found at `path`, `line`) deviates from `spec`."""
    yield from _duplicates(file, value, path)
    if isinstance(spec, Obj):
        yield from _check_obj(file, value, spec, path, line)
    elif isinstance(spec, ListOf):
        yield from _check_list(file, value, spec, path, line)
    elif isinstance(spec, MapOf):
        yield from _check_map(file, value, spec, path, line)
    elif isinstance(spec, TextOr):
        if not isinstance(value, str | dict):
            yield Problem(file, line, path, spec.complaint)
        elif isinstance(value, dict):
            yield from check(file, value, spec.spec, path, line)
    elif isinstance(spec, Choice):
        if value not in spec.options:
            options = ", ".join(spec.options)
            yield Problem(file, line, path, f"must be one of {options}, got {_show(value)}")
    elif not _fits(value, spec):
        yield Problem(file, line, path, spec.value)
    elif spec in (Scalar.ANY, Scalar.MAPPING):
        yield from _nested_duplicates(file, value, path)


def _duplicates(file: str, value: Any, path: str) -> Iterator[Problem]:
    for key, line in getattr(value, "duplicates", ()):
        yield Problem(file, line, child_path(path, _key_text(key)), "is given more than once")


def _nested_duplicates(file: str, value: Any, path: str) -> Iterator[Problem]:
    """Repeated keys anywhere inside a free-form value (a default, a task's parameters)."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        sub_path = child_path(path, key if isinstance(key, int) and isinstance(value, list) else _key_text(key))
        yield from _duplicates(file, item, sub_path)
        yield from _nested_duplicates(file, item, sub_path)


def _check_obj(file: str, value: Any, spec: Obj, path: str, line: int | None) -> Iterator[Problem]:
    if not isinstance(value, dict):
        yield Problem(file, line, path, "must be a mapping")
        return
    for key in value:
        if key not in spec.fields:
            yield Problem(file, line_of(value, key), child_path(path, _key_text(key)), "unknown field")
    for key in spec.required:
        if key not in value:
            yield Problem(file, line_of(value), child_path(path, key), "is required")
    for key, sub in spec.fields.items():
        if key in value:
            yield from check(file, value[key], sub, child_path(path, key), line_of(value, key))


def _check_list(file: str, value: Any, spec: ListOf, path: str, line: int | None) -> Iterator[Problem]:
    if not isinstance(value, list):
        yield Problem(file, line, path, "must be a list")
        return
    if spec.non_empty and not value:
        yield Problem(file, line, path, "must not be empty")
    for i, item in enumerate(value):
        yield from check(file, item, spec.item, child_path(path, i), line_of(value, i))


def _check_map(file: str, value: Any, spec: MapOf, path: str, line: int | None) -> Iterator[Problem]:
    if not isinstance(value, dict):
        yield Problem(file, line, path, "must be a mapping")
        return
    for key, item in value.items():
        sub_path = child_path(path, _key_text(key))
        if not isinstance(key, str):
            yield Problem(file, line_of(value, key), sub_path, "must be named by a string")
        yield from check(file, item, spec.value, sub_path, line_of(value, key))


def _fits(value: Any, kind: Scalar) -> bool:
    is_int = isinstance(value, int) and not isinstance(value, bool)
    match kind:
        case Scalar.STRING:
            return isinstance(value, str)
        case Scalar.INTEGER:
            return is_int
        case Scalar.COUNT:
            return is_int and value >= 0
        case Scalar.NUMBER:
            return is_int or isinstance(value, float)
        case Scalar.BOOLEAN:
            return isinstance(value, bool)
        case Scalar.DURATION:
            return parse_duration(value) is not None
        case Scalar.MAPPING:
            return isinstance(value, dict)
    return True


def _key_text(key: object) -> str:
    return key if isinstance(key, str) else repr(key)


def _show(value: Any) -> str:
    if isinstance(value, dict | list):
        return "a mapping" if isinstance(value, dict) else "a list"
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    return repr(value) if isinstance(value, str) else str(value)


STRINGS = ListOf(Scalar.STRING)
FILES = ListOf(Scalar.STRING, non_empty=True)

EXPECTATION = Obj(
    {"condition": Scalar.STRING, "status": Scalar.STRING, "jsonPath": Scalar.STRING, "equals": Scalar.ANY}
)

HEALTH_RULE = Obj(
    {"group": Scalar.STRING, "kind": Scalar.STRING, "healthy": EXPECTATION,
     "failed": TextOr(EXPECTATION, "must be a CEL expression or a mapping of condition/jsonPath"),
     "current": Scalar.STRING, "inProgress": Scalar.STRING},
    required=("kind",),
)

TASK = Obj(
    {"name": Scalar.STRING, "kind": Choice(tuple(TaskKind)), "spec": Scalar.MAPPING},
    required=("name", "kind"),
)

STEP = Obj(
    {"name": Scalar.STRING, "tasks": FILES, "dependsOn": STRINGS, "timeout": Scalar.DURATION},
    required=("name", "tasks"),
)

PHASE = Obj(
    {"name": Scalar.STRING, "strategy": Choice(tuple(Strategy)), "steps": ListOf(STEP, non_empty=True)},
    required=("name", "steps"),
)

PLAN = Obj({"strategy": Choice(tuple(Strategy)), "phases": ListOf(PHASE, non_empty=True)}, required=("phases",))

OPERATOR = Obj(
    {
        "apiVersion": Scalar.STRING,
        "name": Scalar.STRING,
        "operatorVersion": Scalar.STRING,
        "appVersion": Scalar.STRING,
        "kplanVersion": Scalar.STRING,
        "description": Scalar.STRING,
        "maintainers": ListOf(Obj({"name": Scalar.STRING, "email": Scalar.STRING}, required=("name",))),
        "url": Scalar.STRING,
        "upgradableFrom": STRINGS,
        "tasks": ListOf(TASK, non_empty=True),
        "health": ListOf(HEALTH_RULE),
        "plans": MapOf(PLAN),
    },
    required=("apiVersion", "name", "operatorVersion", "tasks", "plans"),
)

PARAMETER = Obj(
    {
        "name": Scalar.STRING,
        "description": Scalar.STRING,
        "type": Choice(tuple(ParamType)),
        "default": Scalar.ANY,
        "required": Scalar.BOOLEAN,
        "enum": ListOf(Scalar.ANY, non_empty=True),
        "minimum": Scalar.NUMBER,
        "maximum": Scalar.NUMBER,
        "pattern": Scalar.STRING,
        "minLength": Scalar.COUNT,
        "maxLength": Scalar.COUNT,
        "immutable": Scalar.BOOLEAN,
        "trigger": Scalar.STRING,
        "secret": Scalar.BOOLEAN,
        "generate": Obj({"kind": Choice(tuple(GenerateKind)), "length": Scalar.COUNT}, required=("kind",)),
    },
    required=("name",),
)

PARAMS = Obj({"apiVersion": Scalar.STRING, "parameters": ListOf(PARAMETER)}, required=("apiVersion",))

RETRYING = {"force": Scalar.BOOLEAN, "retries": Scalar.COUNT}

TASK_SPECS: Mapping[TaskKind, Obj] = {
    TaskKind.APPLY: Obj({"resources": FILES, **RETRYING}, required=("resources",)),
    TaskKind.DELETE: Obj({"resources": FILES}, required=("resources",)),
    TaskKind.TOGGLE: Obj(
        {"parameter": Scalar.STRING, "resources": FILES, **RETRYING}, required=("parameter", "resources")
    ),
    TaskKind.PIPE: Obj(
        {
            "pod": Scalar.STRING,
            "pipe": ListOf(
                Obj(
                    {"file": Scalar.STRING, "kind": Choice(("ConfigMap", "Secret")), "key": Scalar.STRING},
                    required=("file", "kind", "key"),
                ),
                non_empty=True,
            ),
        },
        required=("pod", "pipe"),
    ),
    TaskKind.OPERATOR: Obj(
        {
            "package": Scalar.STRING,
            "version": Scalar.STRING,
            "instanceName": Scalar.STRING,
            "parameters": MapOf(Scalar.ANY),
        },
        required=("package",),
    ),
    TaskKind.WAIT: Obj(
        {
            "for": ListOf(
                Obj({"resource": Scalar.STRING, "condition": Scalar.STRING}, required=("resource",)), non_empty=True
            ),
            "timeout": Scalar.DURATION,
        },
        required=("for",),
    ),
    TaskKind.DUMMY: Obj({"wantErr": Scalar.BOOLEAN, "fatal": Scalar.BOOLEAN, "done": Scalar.BOOLEAN}),
}
