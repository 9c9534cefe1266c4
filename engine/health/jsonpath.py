"""The jsonPath reader of package health rules: dotted keys, [index], ['key'] and [?(@.field=="value")]."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.health.objects import one_line


class InvalidRule(ValueError):
    """A health rule that can never be evaluated (the package verifier should have caught it)."""


@dataclass(frozen=True)
class Key:
    name: str


@dataclass(frozen=True)
class Index:
    position: int


@dataclass(frozen=True)
class Filter:
    field: tuple[Key, ...]
    value: str


Segment = Key | Index | Filter


MISSING: Any = object()


SEGMENT = re.compile(
    r"""\.(?P<name>(?:[^.\[\\]|\\.)+)
      | \[(?P<index>-?\d+)\]
      | \[(?P<quote>['"])(?P<key>.*?)(?P=quote)\]
      | \[\?\(\s*@\.(?P<field>[\w.-]+)\s*==\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[^)\s]+))\s*\)\]""",
    re.VERBOSE,
)


def parse_path(path: str) -> tuple[Segment, ...]:
    body = path.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1].strip()
    body = body.removeprefix("$")
    if body and body[0] not in ".[":
        body = "." + body
    if not body:
        raise InvalidRule(f"jsonPath {path!r} is empty")
    segments: list[Segment] = []
    position = 0
    while position < len(body):
        match = SEGMENT.match(body, position)
        if match is None:
            raise InvalidRule(f"jsonPath {path!r} cannot be read at {body[position:]!r}")
        segments.append(segment(match))
        position = match.end()
    return tuple(segments)


def segment(match: re.Match[str]) -> Segment:
    if match["name"] is not None:
        return Key(re.sub(r"\\(.)", r"\1", match["name"]))
    if match["index"] is not None:
        return Index(int(match["index"]))
    if match["key"] is not None:
        return Key(match["key"])
    value = next(v for v in (match["dq"], match["sq"], match["bare"]) if v is not None)
    return Filter(tuple(Key(k) for k in match["field"].split(".")), value)


def resolve(value: Any, segments: Sequence[Segment]) -> Any:
    """The value the path leads to, or MISSING."""
    for part in segments:
        value = step(value, part)
        if value is MISSING:
            break
    return value


def step(value: Any, part: Segment) -> Any:
    match part:
        case Key(name):
            return value.get(name, MISSING) if isinstance(value, Mapping) else MISSING
        case Index(position):
            in_range = isinstance(value, list) and -len(value) <= position < len(value)
            return value[position] if in_range else MISSING
        case Filter(field, expected):
            items = value if isinstance(value, list) else []
            return next((item for item in items if same(resolve(item, field), expected)), MISSING)
    return MISSING  # pragma: no cover - the match is exhaustive


def text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else one_line(value)


def same(value: Any, expected: Any) -> bool:
    """Equality that forgives YAML typing: 3 == "3", true == "true", but never 1 == true."""
    scalars = (str, int, float, bool, type(None))
    if isinstance(value, scalars) and isinstance(expected, scalars):
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (value, expected))
        return value == expected if numbers else text(value) == text(expected)
    return bool(value == expected)
