"""Reading an object's fields and conditions the way controllers write them (absent fields mean zero)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Obj = Mapping[str, Any]


EMPTY: Mapping[str, Any] = {}


def as_map(value: Any) -> Mapping[str, Any]:
    return value if value.__class__ is dict or isinstance(value, Mapping) else EMPTY  # a dict skips the ABC


def int_field(mapping: Mapping[str, Any], key: str, default: int = 0) -> int:
    """An int field; absent means `default` (controllers omit zero-valued int fields)."""
    value = mapping.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def spec_of(obj: Obj) -> Mapping[str, Any]:
    return as_map(obj.get("spec"))


def status_of(obj: Obj) -> Mapping[str, Any]:
    return as_map(obj.get("status"))


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def one_line(text: Any) -> str:
    return " ".join(str(text).split())


def conditions_of(obj: Obj) -> dict[str, Mapping[str, Any]]:
    """`status.conditions` by type (the first of each type)."""
    found: dict[str, Mapping[str, Any]] = {}
    conditions = status_of(obj).get("conditions")
    for condition in conditions if isinstance(conditions, list) else []:
        if isinstance(condition, Mapping) and isinstance(condition.get("type"), str):
            found.setdefault(condition["type"], condition)
    return found


def is_true(conditions: Mapping[str, Mapping[str, Any]], kind: str) -> bool:
    return conditions.get(kind, EMPTY).get("status") == "True"


def explain(condition: Mapping[str, Any], fallback: str = "") -> str:
    """`reason: message` of a condition, whichever parts it has."""
    parts = [one_line(condition[k]) for k in ("reason", "message") if condition.get(k)]
    return ": ".join(parts) or fallback


def group_kind(obj: Obj) -> tuple[str, str]:
    api_version = str(obj.get("apiVersion") or "")
    return (api_version.rpartition("/")[0], str(obj.get("kind") or ""))


def condition_current(obj: Obj, condition: Mapping[str, Any]) -> bool:
    """False when the condition says it was computed for an older generation."""
    observed = condition.get("observedGeneration")
    return not isinstance(observed, int) or observed >= int_field(as_map(obj.get("metadata")), "generation")
