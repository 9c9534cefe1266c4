"""The plan part of the Instance status: PlanStatus, a fresh plan record, and phase/plan statuses derived from steps."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from engine.model import Plan
from engine.planner.times import stamp

__all__ = ["TERMINAL", "PlanStatus", "combine", "fresh_plan", "steps_of", "with_steps"]

Json = dict[str, Any]


class PlanStatus(StrEnum):
    NEVER_RUN = "NEVER_RUN"
    PENDING = "PENDING"
    IN_PROGRESS = "IN_PROGRESS"
    COMPLETE = "COMPLETE"
    ERROR = "ERROR"
    FATAL_ERROR = "FATAL_ERROR"


TERMINAL = frozenset({PlanStatus.COMPLETE, PlanStatus.FATAL_ERROR})


def fresh_plan(plan: Plan, uid: str, now: datetime) -> Json:
    """The record of a plan that starts now: IN_PROGRESS, every phase and step PENDING."""
    return {
        "status": PlanStatus.IN_PROGRESS.value,
        "uid": uid,
        "startedAt": stamp(now),
        "lastUpdatedAt": stamp(now),
        "message": "",
        "phases": [
            {"name": phase.name, "status": PlanStatus.PENDING.value, "steps": [fresh_step(s.name) for s in phase.steps]}
            for phase in plan.phases
        ],
    }


def fresh_step(name: str) -> Json:
    return {"name": name, "status": PlanStatus.PENDING.value, "message": "", "attempts": 0}


def steps_of(plan_status: Mapping[str, Any]) -> dict[str, Json]:
    """Every step record of a plan record, by step name."""
    return {s["name"]: s for phase in plan_status.get("phases") or [] for s in phase.get("steps") or []}


def combine(statuses: Iterable[str]) -> PlanStatus:
    """The status of a group of steps: failures first, then all done, all waiting, else in progress."""
    found = {PlanStatus(s) for s in set(statuses)}  # each distinct value once: a long plan's steps share a few
    if PlanStatus.FATAL_ERROR in found:
        return PlanStatus.FATAL_ERROR
    if PlanStatus.ERROR in found:
        return PlanStatus.ERROR
    if found <= {PlanStatus.COMPLETE}:
        return PlanStatus.COMPLETE
    if found <= {PlanStatus.PENDING}:
        return PlanStatus.PENDING
    return PlanStatus.IN_PROGRESS


def with_steps(plan_status: Mapping[str, Any], steps: Mapping[str, Json]) -> Json:
    """A copy of the plan record with `steps` replacing their namesakes and phase and plan statuses derived."""
    phases = [phase_with(phase, steps) for phase in plan_status.get("phases") or []]
    all_steps = [s for phase in phases for s in phase["steps"]]
    status = combine(s["status"] for s in all_steps)
    status = PlanStatus.IN_PROGRESS if status is PlanStatus.PENDING else status
    failed = status in (PlanStatus.FATAL_ERROR, PlanStatus.ERROR)  # else no step failed: no message to look for
    message = plan_message(all_steps) if failed else ""
    return {**plan_status, "phases": phases, "status": status.value, "message": message}


def phase_with(phase: Mapping[str, Any], steps: Mapping[str, Json]) -> Json:
    new_steps = [steps.get(s["name"], s) for s in phase.get("steps") or []]
    return {**phase, "steps": new_steps, "status": combine(s["status"] for s in new_steps).value}


def plan_message(steps: Sequence[Mapping[str, Any]]) -> str:
    """The message of the first failed step, named; empty while nothing failed."""
    for wanted in (PlanStatus.FATAL_ERROR, PlanStatus.ERROR):
        for step in steps:
            if step["status"] == wanted:
                return f"step {step['name']}: {step.get('message') or wanted.value}"
    return ""
