"""Durations as packages write them (`500ms`, `90s`, `10m`, `1h30m`, or plain seconds) in seconds."""

from __future__ import annotations

import math
import re

__all__ = ["parse_duration"]

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_WHOLE = re.compile(r"(?:\d+(?:\.\d+)?(?:ms|s|m|h))+")


def parse_duration(value: object) -> float | None:
    """Seconds, or None when `value` is not a duration (negative, unknown unit, not text or number)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) and value >= 0 else None
    if not isinstance(value, str) or not _WHOLE.fullmatch(value):
        return None
    return sum(float(n) * _UNITS[unit] for n, unit in _PART.findall(value))
