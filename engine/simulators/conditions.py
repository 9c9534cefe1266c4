"""Status conditions as controllers keep them: one per type, timestamps moved only when something changed."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any

JsonDict = dict[str, Any]


def timestamp(moment: datetime.datetime | None = None, *, micro: bool = False) -> str:
    """RFC 3339 UTC, seconds (a Time) or microseconds (a MicroTime): how the API writes times."""
    moment = (moment or datetime.datetime.now(datetime.UTC)).astimezone(datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ" if micro else "%Y-%m-%dT%H:%M:%SZ")


def find(conditions: Sequence[JsonDict], type_: str) -> JsonDict | None:
    return next((c for c in conditions if c.get("type") == type_), None)


def is_true(conditions: Sequence[JsonDict], type_: str) -> bool:
    found = find(conditions, type_)
    return found is not None and found.get("status") == "True"


def put(conditions: Sequence[JsonDict], type_: str, status: bool, reason: str = "", message: str = "", *,
        now: str, stamps: Sequence[str] = (), extra: JsonDict | None = None) -> list[JsonDict]:
    """Conditions with `type_` set; unchanged when status, reason and message already match.

    `lastTransitionTime` moves only when the status flips; each key in `stamps` (lastUpdateTime, lastProbeTime,
    lastHeartbeatTime) is set to `now` whenever the condition changes. `extra` keys go in as given (e.g.
    `lastProbeTime: None` on pods). A new type is appended.
    """
    value = "True" if status else "False"
    current = find(conditions, type_)
    if current is not None and (current.get("status"), current.get("reason", ""), current.get("message", "")) == (
            value, reason, message):
        return list(conditions)
    fresh: JsonDict = {"type": type_, "status": value, **(extra or {})}
    fresh.update({key: now for key in stamps})
    changed = current is None or current.get("status") != value
    fresh["lastTransitionTime"] = now if changed else current.get("lastTransitionTime", now)  # type: ignore[union-attr]
    if reason:
        fresh["reason"] = reason
    if message:
        fresh["message"] = message
    if current is None:
        return [*conditions, fresh]
    return [fresh if c is current else c for c in conditions]
