"""Status writes that may wait: a step's waiting message alone is written once it has stood a while.

A step in progress says what it waits on ("Job x: 0/1 succeeded"), and that changes as its objects progress; a
status write for each change would cost a round trip on the plan's critical path for news that is stale a few
milliseconds later. Transitions (a step started, completed or failed) and any other change are written at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from engine.planner.actions import Settings
from engine.planner.status import PlanStatus, steps_of
from engine.planner.times import parse

__all__ = ["quiet_until"]

Json = dict[str, Any]
STAMP = "lastUpdatedAt"


def quiet_until(before: Mapping[str, Any], after: Mapping[str, Any], settings: Settings) -> datetime | None:
    """When `after` is due to be written, if it differs from `before` only in the messages of steps in progress in
    both (and the stamps of that change): `settings.message_delay` seconds after the latest of those steps' records
    last changed. None when it differs in anything else, or a step's last change is not known (write it now)."""
    old_plans, new_plans = before.get("plans") or {}, after.get("plans") or {}
    if set(old_plans) != set(new_plans):
        return None
    changed: list[datetime] = []
    plans: Json = {}
    for name, record in new_plans.items():
        old_steps = steps_of(old_plans[name])
        kept: dict[str, Json] = {}
        for step_name, step in steps_of(record).items():
            old = old_steps.get(step_name)
            if old is None or step.get("message") == old.get("message"):
                continue
            if not (step.get("status") == old.get("status") == PlanStatus.IN_PROGRESS):
                return None
            since = parse(old.get(STAMP))
            if since is None:
                return None
            changed.append(since)
            kept[step_name] = {**step, "message": old.get("message")}
        plans[name] = with_step_records(record, kept) if kept else record
    if not changed or untimed({**after, "plans": plans}) != untimed(before):
        return None
    return max(changed) + timedelta(seconds=settings.message_delay)


def with_step_records(record: Mapping[str, Any], steps: Mapping[str, Json]) -> Json:
    phases = [{**phase, "steps": [steps.get(s.get("name"), s) for s in phase.get("steps") or []]}
              for phase in record.get("phases") or []]
    return {**record, "phases": phases}


def untimed(value: Any) -> Any:
    """`value` without any `lastUpdatedAt` (the stamps a message change moves)."""
    if isinstance(value, Mapping):
        return {k: untimed(v) for k, v in value.items() if k != STAMP}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value
