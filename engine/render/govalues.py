"""What Go's templates and sprig think of a value: its kind, whether it is true, whether it is defined."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jinja2.runtime import Undefined

__all__ = ["defined", "kind_of", "truth"]


def defined(*values: Any) -> None:
    for value in values:
        if isinstance(value, Undefined):
            value._fail_with_undefined_error()


def kind_of(value: Any) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "map"
    if isinstance(value, list | tuple):
        return "slice"
    return "other"


def truth(value: Any) -> bool:
    """Go's truth: false, 0, nil and empty strings, lists and maps are false."""
    defined(value)
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, str | list | tuple | Mapping):
        return len(value) > 0
    return True
