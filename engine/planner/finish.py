"""Settling a decided status: activePlan in step, lastUpdatedAt only where something changed, backoff, conditions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from engine.planner.actions import Event, Settings
from engine.planner.conditions import conditions
from engine.planner.secrets import scrub
from engine.planner.status import PlanStatus, steps_of
from engine.planner.times import retry_at, stamp

__all__ = ["backoff_deadline", "scrubbed", "settle", "transition_events"]

Json = dict[str, Any]


def settle(status: Json, prior: Mapping[str, Any], now: datetime, settings: Settings, generation: int | None,
           deleting: bool) -> Json:
    """The status to write: derived parts recomputed, timestamps moved only where content changed."""
    status = stamped(synced(status), prior, now)
    status = with_backoff(status, settings)
    status["conditions"] = conditions(status, list(prior.get("conditions") or []), now, generation, deleting)
    if generation is not None:
        status["observedGeneration"] = generation
    return status


def synced(status: Json) -> Json:
    """activePlan's uid and status copied from its plan record."""
    active = status.get("activePlan")
    record = (status.get("plans") or {}).get((active or {}).get("name"))
    if not active or not record:
        return status
    return {**status, "activePlan": {**active, "uid": record.get("uid"), "status": record.get("status")}}


def stamped(status: Json, prior: Mapping[str, Any], now: datetime) -> Json:
    before = prior.get("plans") or {}
    plans = {name: stamped_plan(rec, before.get(name) or {}, now) for name, rec in (status.get("plans") or {}).items()}
    return {**status, "plans": plans} if plans else status


def stamped_plan(record: Json, before: Mapping[str, Any], now: datetime) -> Json:
    old_steps = steps_of(before)
    phases = [
        {**phase, "steps": [stamped_step(s, old_steps.get(s["name"]), now) for s in phase.get("steps") or []]}
        for phase in record.get("phases") or []
    ]
    new = {**record, "phases": phases}
    changed = not same_untimed(new, before)
    return {**new, "lastUpdatedAt": stamp(now) if changed else before.get("lastUpdatedAt", stamp(now))}


def stamped_step(step: Json, before: Mapping[str, Any] | None, now: datetime) -> Json:
    """`step` with its old stamp when only stamps differ from `before` (most of a long plan's steps: equal, stamp and
    all, which one == in C tells), else stamped `now`."""
    if before is not None and "lastUpdatedAt" in before and (step == before or same_untimed(step, before)):
        kept = before["lastUpdatedAt"]
        return step if step.get("lastUpdatedAt") == kept else {**step, "lastUpdatedAt": kept}
    return {**step, "lastUpdatedAt": stamp(now)}


def same_untimed(one: Any, other: Any) -> bool:
    """Whether `one` and `other` are equal once every `lastUpdatedAt` is left out (content unchanged), compared in
    place: a pass compares its whole plan record with the one before.

    A list's items are tried with == first (in C: most of a long plan's steps are equal); a dict's values that are
    dicts or lists are not (a whole-== at each level of plan, phases, phase and steps walked the same steps again at
    every level before the one step that changed was found)."""
    if one is other:
        return True
    if (one.__class__ is dict or isinstance(one, Mapping)) and (other.__class__ is dict or isinstance(other, Mapping)):
        keys = {k for k in one if k != "lastUpdatedAt"}
        return keys == {k for k in other if k != "lastUpdatedAt"} and all(same_part(one[k], other[k]) for k in keys)
    if isinstance(one, list) and isinstance(other, list):
        return len(one) == len(other) and all(a == b or same_untimed(a, b) for a, b in zip(one, other, strict=True))
    if isinstance(one, Mapping | list) or isinstance(other, Mapping | list):
        return False
    return bool(one == other)


def same_part(one: Any, other: Any) -> bool:
    """`same_untimed` of two values of a dict: a dict or list is compared part by part, anything else with ==."""
    if one.__class__ is dict or one.__class__ is list or isinstance(one, Mapping | list):
        return same_untimed(one, other)
    if other.__class__ is dict or other.__class__ is list or isinstance(other, Mapping | list):
        return False
    return one is other or bool(one == other)


def with_backoff(status: Json, settings: Settings) -> Json:
    """`backoff: {step, until, attempts}` for the active plan's step that is retried first, if any."""
    status = {k: v for k, v in status.items() if k != "backoff"}
    waiting = backoffs(status, settings)
    if not waiting:
        return status
    until, name, attempts = min(waiting)
    return {**status, "backoff": {"step": name, "until": stamp(until), "attempts": attempts}}


def backoffs(status: Mapping[str, Any], settings: Settings) -> list[tuple[datetime, str, int]]:
    active = (status.get("activePlan") or {}).get("name")
    steps = steps_of((status.get("plans") or {}).get(active) or {}).values()
    found = []
    for step in [s for s in steps if s.get("status") == PlanStatus.ERROR]:
        until = retry_at(step, settings.backoff_base, settings.backoff_max)
        if until is not None:
            found.append((until, str(step["name"]), int(step.get("attempts") or 0)))
    return found


def backoff_deadline(status: Mapping[str, Any], settings: Settings) -> datetime | None:
    waiting = backoffs(status, settings)
    return min(waiting)[0] if waiting else None


def transition_events(prior: Mapping[str, Any], status: Mapping[str, Any]) -> tuple[Event, ...]:
    """Events for plans that just completed or failed and steps that just went into ERROR."""
    before = prior.get("plans") or {}
    events: list[Event] = []
    for name, record in sorted((status.get("plans") or {}).items()):
        events += plan_events(name, record, before.get(name) or {})
    return tuple(events)


def plan_events(name: str, record: Mapping[str, Any], before: Mapping[str, Any]) -> list[Event]:
    fresh = (record.get("uid"), record.get("status")) != (before.get("uid"), before.get("status"))
    events = []
    if fresh and record.get("status") == PlanStatus.COMPLETE:
        events.append(Event("PlanComplete", f"plan {name} is complete"))
    if fresh and record.get("status") == PlanStatus.FATAL_ERROR:
        events.append(Event("PlanFailed", f"plan {name} failed: {record.get('message') or ''}", "Warning"))
    failed = [s for s in steps_of(record).values() if s.get("status") == PlanStatus.ERROR]
    old_steps = steps_of(before) if failed and record.get("uid") == before.get("uid") else {}
    for step in failed:
        old = old_steps.get(step["name"]) or {}
        if not same_untimed(old, step):
            events.append(Event("StepError", f"plan {name} step {step['name']}: {step.get('message')}", "Warning"))
    return events


def scrubbed(value: Any, secrets: Iterable[str]) -> Any:
    """`value` with secret texts removed from every `message`."""
    texts = tuple(secrets)
    if not texts:
        return value
    if value.__class__ is dict or isinstance(value, Mapping):
        return {k: scrub(v, texts) if k == "message" and isinstance(v, str) else scrubbed(v, texts)
                for k, v in value.items()}
    if isinstance(value, list):
        return [scrubbed(v, texts) for v in value]
    return value
