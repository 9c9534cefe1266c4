"""Advancing a plan through its DAG: check the started steps, then start every step whose predecessors are COMPLETE."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.model import Plan, Step
from engine.planner.actions import Action, Event
from engine.planner.indexing import NOTHING
from engine.planner.refs import Ref
from engine.planner.status import PlanStatus, fresh_step, steps_of, with_steps
from engine.planner.steps import PlanScope, StepResult, check_step, heal_step, known_clean, retry_step, start_step

__all__ = ["PlanScope", "Progress", "advance", "heal"]

Json = dict[str, Any]
ACTIVE = frozenset({PlanStatus.IN_PROGRESS, PlanStatus.ERROR, PlanStatus.COMPLETE})  # what progress_step acts on


@dataclass(frozen=True)
class Progress:
    record: Json
    actions: tuple[Action, ...] = ()
    events: tuple[Event, ...] = ()
    deadlines: tuple[datetime, ...] = ()


def advance(scope: PlanScope, record: Mapping[str, Any]) -> Progress:
    """One decision's worth of progress of a running plan."""
    known = steps_of(record)
    later = superseded(scope, known)
    results: dict[str, StepResult] = {}
    records: dict[str, Json] = {}
    for step in scope.index.steps:
        current = known.get(step.name) or fresh_step(step.name)
        status = current.get("status")
        if status == PlanStatus.COMPLETE and step.name not in later and known_clean(scope, step, True, NOTHING):
            pass  # settled and known clean: nothing to act on, its record passed on as it is
        elif status in ACTIVE:
            results[step.name] = result = progress_step(scope, step, current, later.get(step.name, NOTHING))
            current = result.record
        records[step.name] = current
    if not any(r["status"] == PlanStatus.FATAL_ERROR for r in records.values()):
        started = start_ready(scope, records)
        results, records = {**results, **started}, {**records, **{n: r.record for n, r in started.items()}}
    ordered = [results[s.name] for s in scope.index.steps if s.name in results]
    return collect(with_steps(reshaped(record, scope.plan, known), records), ordered)


def progress_step(scope: PlanScope, step: Step, record: Json, later: frozenset[Ref] = NOTHING) -> StepResult:
    """`later`: objects of this step that a later started step applied again (their drift is that step's)."""
    status = record.get("status")
    if status == PlanStatus.IN_PROGRESS:
        checked = check_step(scope.of(step), record)
        if checked.record["status"] not in (PlanStatus.IN_PROGRESS, PlanStatus.COMPLETE):
            return checked
        healed = heal_step(scope, step, checked.record, later)
        return StepResult(checked.record, checked.actions + healed.actions, healed.events, checked.deadline)
    if status == PlanStatus.ERROR:
        return retry_step(scope.of(step), record)
    if status == PlanStatus.COMPLETE:
        return heal_step(scope, step, record, later)
    return StepResult(record)


def superseded(scope: PlanScope, records: Mapping[str, Mapping[str, Any]]) -> dict[str, frozenset[Ref]]:
    """Per step, the objects it renders that a started step after it (in the DAG) renders too (steps without any
    are left out).

    A plan may apply one object in several steps, each with its own content (a StatefulSet's
    rolling-update partition lowered step by step): the latest render is the one to keep, so an
    earlier step must not restore its own version of the object as drift.
    """
    found = {}
    for name, later in scope.index.overlaps.items():
        refs = frozenset(r for after, common in later if started(records.get(after)) for r in common)
        if refs:
            found[name] = refs
    return found


def started(record: Mapping[str, Any] | None) -> bool:
    return record is not None and record.get("status") not in (None, PlanStatus.PENDING)


def start_ready(scope: PlanScope, records: Mapping[str, Json]) -> dict[str, StepResult]:
    """Start every PENDING step whose predecessors are all COMPLETE (`graph.frontier`, read off the index's
    predecessors: every pass asks it of the whole plan)."""
    completed = {n for n, r in records.items() if r["status"] == PlanStatus.COMPLETE}
    predecessors = scope.index.dag.predecessors
    return {s.name: start_step(scope.of(s), records[s.name]) for s in scope.index.steps
            if records[s.name]["status"] == PlanStatus.PENDING and completed.issuperset(predecessors[s.name])}


def heal(scope: PlanScope, record: Mapping[str, Any]) -> Progress:
    """A COMPLETE plan: nothing to start, but what drifted is applied again."""
    known = steps_of(record)
    later = superseded(scope, known)
    steps = [s for s in scope.index.steps if s.name in known]
    results = [heal_step(scope, s, known[s.name], later.get(s.name, NOTHING)) for s in steps]
    return collect(dict(record), results)


def collect(record: Json, results: Iterable[StepResult]) -> Progress:
    every = list(results)
    return Progress(
        record,
        tuple(a for r in every for a in r.actions),
        tuple(e for r in every for e in r.events),
        tuple(r.deadline for r in every if r.deadline is not None),
    )


def reshaped(record: Mapping[str, Any], plan: Plan, known: Mapping[str, Json] | None = None) -> Json:
    """The plan record laid out as the plan is (phases and steps the record lacks are added PENDING); `known`: its
    `steps_of`, when the caller has it."""
    known = steps_of(record) if known is None else known
    old_phases = {p.get("name"): p for p in record.get("phases") or []}
    phases = [
        {**old_phases.get(ph.name, {"status": PlanStatus.PENDING.value}), "name": ph.name,
         "steps": [known.get(s.name) or fresh_step(s.name) for s in ph.steps]}
        for ph in plan.phases
    ]
    return {**record, "phases": phases}
