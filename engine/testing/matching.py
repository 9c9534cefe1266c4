"""Subset matching of expected fields against live objects, and the field-level differences when they differ.

Maps match recursively (the live object may have more keys), lists element-wise (same length, each
element a subset match), `null` expects the field to be absent or null, a `Pattern` (`!regex` in test
files) expects a string it finds a match in, and anything else must be equal (a boolean never equals
a number).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MISSING", "Mismatch", "Pattern", "differences", "matches", "show"]

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
LONGEST_VALUE = 160  # characters of a value shown in a difference


class Missing:
    """The value of a field the live object does not have."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING = Missing()


@dataclass(frozen=True)
class Pattern:
    """A regular expression a string field must contain a match of."""

    regex: str

    def found_in(self, value: Any) -> bool:
        return isinstance(value, str) and re.search(self.regex, value) is not None


@dataclass(frozen=True)
class Mismatch:
    """One field that differs: where (`status.plans.deploy.status`), what was expected, what the cluster has."""

    path: str
    expected: Any
    actual: Any

    def __str__(self) -> str:
        return f"{self.path or '(object)'}: expected {show(self.expected)}, got {show(self.actual)}"


def matches(expected: Any, actual: Any) -> bool:
    return not differences(expected, actual)


def differences(expected: Any, actual: Any, path: str = "") -> list[Mismatch]:
    """Every field of `expected` that `actual` does not match, in document order."""
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return [Mismatch(path, expected, actual)]
        found: list[Mismatch] = []
        for key, value in expected.items():
            found += differences(value, actual.get(key, MISSING), child(path, key))
        return found
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [Mismatch(path, expected, actual)]
        pairs = enumerate(zip(expected, actual, strict=True))
        return [m for i, (e, a) in pairs for m in differences(e, a, f"{path}[{i}]")]
    return [] if scalar_matches(expected, actual) else [Mismatch(path, expected, actual)]


def scalar_matches(expected: Any, actual: Any) -> bool:
    if expected is None:
        return actual is None or actual is MISSING
    if isinstance(expected, Pattern):
        return expected.found_in(actual)
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    return bool(expected == actual)


def child(path: str, key: Any) -> str:
    """`a.b`, or `a["kplan.dev/instance"]` for a key that is not an identifier."""
    text = str(key)
    if IDENTIFIER.fullmatch(text):
        return f"{path}.{text}" if path else text
    return f"{path}[{json.dumps(text)}]"


def show(value: Any) -> str:
    """A value as a difference prints it: JSON, `/regex/`, `<missing>`; long values cut."""
    if value is MISSING:
        return "<missing>"
    if isinstance(value, Pattern):
        return f"/{value.regex}/"
    text = json.dumps(value, sort_keys=True, default=show)
    return text if len(text) <= LONGEST_VALUE else text[: LONGEST_VALUE - 3] + "..."
