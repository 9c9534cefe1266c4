"""Timestamps as the status stores them (RFC 3339, seconds, UTC) and the retry and timeout arithmetic."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["backoff_delay", "parse", "requeue_after", "retry_at", "stamp", "timeout_at"]


@functools.lru_cache(maxsize=16)  # a decision stamps its one `now` several times
def stamp(now: datetime) -> str:
    """`now` as `2024-05-01T12:00:00Z` (naive datetimes are taken as UTC)."""
    moment = now.replace(tzinfo=UTC) if now.tzinfo is None else now.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse(text: Any) -> datetime | None:
    """A status or metadata timestamp, or None when absent or unreadable."""
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def aware(now: datetime) -> datetime:
    return now.replace(tzinfo=UTC) if now.tzinfo is None else now


def backoff_delay(attempts: int, base: float, limit: float) -> float:
    """Seconds before retry number `attempts` (1, 2, ...): base * 2**(attempts-1), at most `limit`."""
    exponent = min(max(attempts - 1, 0), 62)
    return float(min(base * 2**exponent, limit))


def retry_at(step: Mapping[str, Any], base: float, limit: float) -> datetime | None:
    """When an ERROR step may be retried: its last change plus the backoff for its attempts."""
    changed = parse(step.get("lastUpdatedAt"))
    if changed is None:
        return None
    return changed + timedelta(seconds=backoff_delay(int(step.get("attempts") or 1), base, limit))


def timeout_at(started: Any, seconds: float | None) -> datetime | None:
    """When something started at `started` times out, or None without a timeout."""
    began = parse(started)
    if began is None or seconds is None:
        return None
    return began + timedelta(seconds=seconds)


def requeue_after(deadlines: Iterable[datetime | None], now: datetime) -> float | None:
    """Seconds until the earliest deadline still ahead, or None without any (passed ones were acted on)."""
    moment = aware(now)
    pending = [d for d in deadlines if d is not None and d > moment]
    return (min(pending) - moment).total_seconds() if pending else None
