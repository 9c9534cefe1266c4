"""Typed run events (PlanStarted, StepStarted, ...) found by diffing an Instance's status before and after a pass."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from engine.planner import PlanStatus
from engine.planner.times import parse

__all__ = ["PlanFinished", "PlanStarted", "RunEvent", "StepCompleted", "StepFailed", "StepStarted", "changes"]

ENDS = frozenset({PlanStatus.COMPLETE.value, PlanStatus.FATAL_ERROR.value})
FAILED = frozenset({PlanStatus.ERROR.value, PlanStatus.FATAL_ERROR.value})
Json = Mapping[str, Any]


@dataclass(frozen=True)
class PlanStarted:
    namespace: str
    instance: str
    plan: str
    uid: str


@dataclass(frozen=True)
class StepStarted:
    namespace: str
    instance: str
    plan: str
    phase: str
    step: str


@dataclass(frozen=True)
class StepCompleted:
    namespace: str
    instance: str
    plan: str
    phase: str
    step: str


@dataclass(frozen=True)
class StepFailed:
    """A step went to ERROR (retried with backoff) or FATAL_ERROR (`fatal`), or failed again differently."""

    namespace: str
    instance: str
    plan: str
    phase: str
    step: str
    message: str
    fatal: bool = False


@dataclass(frozen=True)
class PlanFinished:
    """A plan ended: COMPLETE or FATAL_ERROR; `duration` in seconds from its status timestamps, when known."""

    namespace: str
    instance: str
    plan: str
    status: str
    message: str = ""
    duration: float | None = None


RunEvent = PlanStarted | StepStarted | StepCompleted | StepFailed | PlanFinished


def changes(namespace: str, instance: str, old: Json, new: Json) -> list[RunEvent]:
    """What happened between two statuses of one Instance, plan by plan, in plan order."""
    old_plans, new_plans = old.get("plans") or {}, new.get("plans") or {}
    found: list[RunEvent] = []
    for plan in sorted(new_plans):
        found += plan_changes(namespace, instance, plan, old_plans.get(plan) or {}, new_plans[plan] or {})
    return found


def plan_changes(namespace: str, instance: str, plan: str, old: Json, new: Json) -> list[RunEvent]:
    if not new.get("uid") or new.get("status") == PlanStatus.NEVER_RUN.value:
        return []
    restarted = old.get("uid") != new.get("uid")
    before: Json = {} if restarted else old
    found: list[RunEvent] = [PlanStarted(namespace, instance, plan, str(new["uid"]))] if restarted else []
    old_steps = {(phase, str(step.get("name"))): step for phase, step in steps(before)}
    for phase, step in steps(new):
        was = old_steps.get((phase, str(step.get("name"))))
        if was != step:  # an unchanged step (most of a long plan, every pass) has nothing to tell
            found += step_changes(namespace, instance, plan, phase, step, was)
    ended = new.get("status") in ENDS and (restarted or before.get("status") != new.get("status"))
    if ended:
        found.append(PlanFinished(namespace, instance, plan, str(new["status"]), str(new.get("message") or ""),
                                  duration(new)))
    return found


def step_changes(
    namespace: str, instance: str, plan: str, phase: str, new: Json, old: Json | None
) -> list[RunEvent]:
    was, now = (old or {}).get("status") or PlanStatus.PENDING.value, new.get("status")
    name = str(new.get("name"))
    found: list[RunEvent] = []
    if now != PlanStatus.PENDING.value and (was == PlanStatus.PENDING.value or (
            was in FAILED and now == PlanStatus.IN_PROGRESS.value)):
        found.append(StepStarted(namespace, instance, plan, phase, name))
    if now == PlanStatus.COMPLETE.value and was != now:
        found.append(StepCompleted(namespace, instance, plan, phase, name))
    if now in FAILED and (was != now or (old or {}).get("message") != new.get("message")):
        fatal = now == PlanStatus.FATAL_ERROR.value
        found.append(StepFailed(namespace, instance, plan, phase, name, str(new.get("message") or ""), fatal))
    return found


def steps(plan: Json) -> Iterator[tuple[str, Json]]:
    for phase in plan.get("phases") or []:
        for step in phase.get("steps") or []:
            yield str(phase.get("name")), step


def duration(plan: Json) -> float | None:
    started, updated = parse(plan.get("startedAt")), parse(plan.get("lastUpdatedAt"))
    if started is None or updated is None:
        return None
    return max((updated - started).total_seconds(), 0.0)
