"""The small JSONPath subset of CRD printer columns: `.a.b`, `.a\\.b/c` (escaped dot), `[0]`, `[*]`, `['x.y']`
and `[?(@.k=="v")]`."""

from __future__ import annotations

import re
from typing import Any

_TOKEN = re.compile(r"""\.((?:[A-Za-z0-9_$/-]|\\\.)+)|\[\s*(\d+|\*)\s*\]|\[\s*'([^']*)'\s*\]
                        |\[\s*\?\(\s*@((?:\.[A-Za-z0-9_-]+)+)\s*==\s*["']([^"']*)["']\s*\)\s*\]""", re.X)


def parse(path: str) -> list[tuple[str, Any]] | None:
    """Steps of the path; None when it is outside the supported subset."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    text = text.removeprefix("$")
    steps: list[tuple[str, Any]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            return None
        if m[1] is not None:
            steps.append(("field", m[1].replace("\\.", ".")))
        elif m[2] is not None:
            steps.append(("all", None) if m[2] == "*" else ("index", int(m[2])))
        elif m[3] is not None:
            steps.append(("field", m[3]))
        else:
            steps.append(("filter", (m[4].lstrip(".").split("."), m[5])))
        pos = m.end()
    return steps


def find(obj: Any, path: str) -> list[Any]:
    """Every value the path selects (empty when none)."""
    steps = parse(path)
    if steps is None:
        return []
    values = [obj]
    for kind, arg in steps:
        values = [v for current in values for v in _step(current, kind, arg)]
    return values


def _step(value: Any, kind: str, arg: Any) -> list[Any]:
    if kind == "field":
        return [value[arg]] if isinstance(value, dict) and arg in value else []
    if kind == "index":
        return [value[arg]] if isinstance(value, list) and -len(value) <= arg < len(value) else []
    if kind == "all":
        return list(value) if isinstance(value, list) else list(value.values()) if isinstance(value, dict) else []
    keys, expected = arg
    if not isinstance(value, list):
        return []
    return [item for item in value if _lookup(item, keys) is not None and str(_lookup(item, keys)) == expected]


def _lookup(value: Any, keys: list[str]) -> Any:
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value
