"""Advancing a plan through its DAG: check the started steps, then start every step whose predecessors are COMPLETE."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import networkx as nx

from engine import graph
from engine.model import Plan
from engine.planner.actions import Action, Event
from engine.planner.refs import Ref
from engine.planner.rendering import Rendered
from engine.planner.status import PlanStatus, fresh_step, steps_of, with_steps
from engine.planner.steps import PlanScope, StepResult, StepScope, check_step, heal_step, retry_step, start_step

__all__ = ["PlanScope", "Progress", "advance", "heal"]

Json = dict[str, Any]


@dataclass(frozen=True)
class Progress:
    record: Json
    actions: tuple[Action, ...] = ()
    events: tuple[Event, ...] = ()
    deadlines: tuple[datetime, ...] = ()


def advance(scope: PlanScope, record: Mapping[str, Any]) -> Progress:
    """One decision's worth of progress of a running plan."""
    known = steps_of(record)
    current = {s.name: known.get(s.name) or fresh_step(s.name) for s in scope.plan.steps}
    later = superseded(scope, current)
    results = {s.name: progress_step(scope.of(s), current[s.name], later[s.name]) for s in scope.plan.steps}
    records = {name: r.record for name, r in results.items()}
    if not any(r["status"] == PlanStatus.FATAL_ERROR for r in records.values()):
        started = start_ready(scope, records)
        results, records = {**results, **started}, {**records, **{n: r.record for n, r in started.items()}}
    ordered = [results[s.name] for s in scope.plan.steps]
    return collect(with_steps(reshaped(record, scope.plan), records), ordered)


def progress_step(scope: StepScope, record: Json, later: frozenset[Ref] = frozenset()) -> StepResult:
    """`later`: objects of this step that a later started step applied again (their drift is that step's)."""
    status = record.get("status")
    if status == PlanStatus.IN_PROGRESS:
        checked = check_step(scope, record)
        if checked.record["status"] not in (PlanStatus.IN_PROGRESS, PlanStatus.COMPLETE):
            return checked
        healed = heal_step(without(scope, later), checked.record)
        return StepResult(checked.record, checked.actions + healed.actions, healed.events, checked.deadline)
    if status == PlanStatus.ERROR:
        return retry_step(scope, record)
    if status == PlanStatus.COMPLETE:
        return heal_step(without(scope, later), record)
    return StepResult(record)


def superseded(scope: PlanScope, records: Mapping[str, Mapping[str, Any]]) -> dict[str, frozenset[Ref]]:
    """Per step, the objects it renders that a started step after it (in the DAG) renders too.

    A plan may apply one object in several steps, each with its own content (a StatefulSet's
    rolling-update partition lowered step by step): the latest render is the one to keep, so an
    earlier step must not restore its own version of the object as drift.
    """
    descendants = dag_of(scope.plan).descendants
    started = {n for n, r in records.items() if r.get("status") not in (None, PlanStatus.PENDING)}
    refs = refs_by_step(scope.plan, scope.rendered)
    return {
        name: frozenset(r for after in descendants[name] & started for r in refs[after] & refs[name])
        for name in refs
    }


@dataclass(frozen=True)
class Dag:
    """A plan's DAG with what every pass reads of it: each step's descendants and layer."""

    graph: nx.DiGraph
    descendants: Mapping[str, frozenset[str]]
    depths: Mapping[str, int]


@functools.lru_cache(maxsize=256)
def dag_of(plan: Plan) -> Dag:
    """The plan's DAG, built once per plan (shared by every pass: read only)."""
    dag = graph.build(plan)
    return Dag(dag, {name: frozenset(nx.descendants(dag, name)) for name in dag}, graph.depths(dag))


def refs_by_step(plan: Plan, rendered: Rendered) -> dict[str, set[Ref]]:
    """Per step of `plan`, the objects its tasks render."""
    refs: dict[str, set[Ref]] = {s.name: set() for s in plan.steps}
    for (name, _), task in rendered.items():
        if name in refs:
            refs[name].update(Ref.of(obj) for obj in task.objects)
    return refs


def without(scope: StepScope, refs: frozenset[Ref]) -> StepScope:
    """`scope` with `refs` left out of what its step rendered."""
    if not refs:
        return scope
    rendered = {
        key: replace(task, objects=tuple(o for o in task.objects if Ref.of(o) not in refs))
        if key[0] == scope.step.name else task
        for key, task in scope.rendered.items()
    }
    return replace(scope, rendered=rendered)


def start_ready(scope: PlanScope, records: Mapping[str, Json]) -> dict[str, StepResult]:
    dag = dag_of(scope.plan)
    completed = {n for n, r in records.items() if r["status"] == PlanStatus.COMPLETE}
    started = {n for n, r in records.items() if r["status"] != PlanStatus.PENDING}
    ready = set(graph.frontier(dag.graph, completed, started, dag.depths))
    return {s.name: start_step(scope.of(s), records[s.name]) for s in scope.plan.steps if s.name in ready}


def heal(scope: PlanScope, record: Mapping[str, Any]) -> Progress:
    """A COMPLETE plan: nothing to start, but what drifted is applied again."""
    known = steps_of(record)
    later = superseded(scope, known)
    steps = [s for s in scope.plan.steps if s.name in known]
    results = [heal_step(without(scope.of(s), later[s.name]), known[s.name]) for s in steps]
    return collect(dict(record), results)


def collect(record: Json, results: Iterable[StepResult]) -> Progress:
    every = list(results)
    return Progress(
        record,
        tuple(a for r in every for a in r.actions),
        tuple(e for r in every for e in r.events),
        tuple(r.deadline for r in every if r.deadline is not None),
    )


def reshaped(record: Mapping[str, Any], plan: Plan) -> Json:
    """The plan record laid out as the plan is (phases and steps the record lacks are added PENDING)."""
    known = steps_of(record)
    old_phases = {p.get("name"): p for p in record.get("phases") or []}
    phases = [
        {**old_phases.get(ph.name, {"status": PlanStatus.PENDING.value}), "name": ph.name,
         "steps": [known.get(s.name) or fresh_step(s.name) for s in ph.steps]}
        for ph in plan.phases
    ]
    return {**record, "phases": phases}
