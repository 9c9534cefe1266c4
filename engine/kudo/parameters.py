"""KUDO's params.yaml as kplan's: every parameter a string unless typed `array` or `map`, as KUDO rendered it.

KUDO handed templates a parameter's text, except for `array` and `map` parameters, which it read as
YAML; `integer`, `number` and `boolean` were declarations only. So those stay strings here, a number
or boolean default becomes its text as Go prints it, and a parameter that is not required and has no
default (or an empty `default:`) gets KUDO's empty value. `trigger`, `immutable` and `enum` carry over;
`displayName` fills an empty description; `group`, `advanced` and `hint` (install-time hints) go.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from engine.errors import PackageInvalid, Problem
from engine.package import source
from engine.render.gofmt import value_text

__all__ = ["convert_parameters"]

FILE = "params.yaml"
STRUCTURED = ("array", "map")
_EMPTY: Mapping[str, Any] = {"string": "", "array": [], "map": {}}

Remark = tuple[int | None, str]


def convert_parameters(kudo: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[Remark]]:
    """kplan's parameter list for KUDO's params.yaml document, and what to tell about it as (line, message)."""
    out: list[dict[str, Any]] = []
    remarks: list[Remark] = []
    listed = kudo.get("parameters") or []
    for index, param in enumerate(listed):
        if isinstance(param, dict):
            out.append(_parameter(param, source.line_of(listed, index), remarks))
    return out, remarks


def _parameter(kudo: Mapping[str, Any], line: int | None, remarks: list[Remark]) -> dict[str, Any]:
    name = str(kudo.get("name", ""))
    declared = str(kudo.get("type") or "string")
    kind = declared if declared in STRUCTURED else "string"
    if kind != declared:
        remarks.append((line, f"parameter {name} of type {declared} stays a string, as KUDO rendered it"))
    param: dict[str, Any] = {"name": name}
    description = str(kudo.get("description") or kudo.get("displayName") or "").strip()
    if description:
        param["description"] = description
    if kind != "string":
        param["type"] = kind
    if kudo.get("default") is not None:
        param["default"] = _default(kudo["default"], kind, name, line)
    elif kudo.get("required") is False or "default" in kudo:
        param["default"] = _EMPTY[kind]
    if "trigger" in kudo:
        param["trigger"] = str(kudo["trigger"])
    if "immutable" in kudo:
        param["immutable"] = bool(kudo["immutable"])
    if kudo.get("enum"):
        param["enum"] = [value_text(v, False) if kind == "string" else v for v in kudo["enum"]]
    return param


def _default(value: Any, kind: str, name: str, line: int | None) -> Any:
    if kind == "string":
        return value if isinstance(value, str) else value_text(value, False)
    if isinstance(value, str):
        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError as err:
            problem = Problem(FILE, line, f"parameter {name}", f"default is not valid YAML for a {kind}: {err}")
            raise PackageInvalid([problem]) from None
    return value if value is not None else _EMPTY[kind]
