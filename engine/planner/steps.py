"""One step of the running plan: start it, check it, fail it, retry it after backoff, heal its drift."""

from __future__ import annotations

import functools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from engine.model import Package, Plan, Step, Task
from engine.planner import ownership, tasks
from engine.planner.actions import Action, Apply, Delete, Event, Settings
from engine.planner.drift import first_difference
from engine.planner.indexing import Healed, PlanIndex
from engine.planner.refs import Ref
from engine.planner.rendering import Rendered
from engine.planner.stamping import Owner
from engine.planner.status import PlanStatus
from engine.planner.times import aware, retry_at, stamp, timeout_at
from engine.render.cache import Lru
from engine.render.stamping import claim_templates_as_live

__all__ = ["PlanScope", "StepResult", "StepScope", "check_step", "heal_step", "known_clean", "retry_step", "start_step",
           "task_scopes"]

Json = dict[str, Any]
GONE = "<gone>"  # drifted(): the object itself is missing
# drifted() of a rendered object (shared by the plan memo, never changed) against one version of its live object
# (uid and resourceVersion name its content): every pass over a settled step checks the same pair again. The entry
# holds the rendered object, so its id is not reused while the entry lives.
DRIFTS: Lru[tuple[Mapping[str, Any], str]] = Lru(4096)
# Steps heal_step found clean (nothing to apply again, no Event) for one render of their tasks, one version of each
# live object it would heal, their owner and whether they are COMPLETE: a pass over a long plan checks each settled
# step again, and an unchanged one is known clean. Keyed by the id of the step's Healed (its index's: the step's task
# renders and their kinds; the entry is that Healed, so its id is not reused while the entry lives), and the uid and
# resourceVersion of each live object (an object without them is never remembered clean).
CLEAN: Lru[Healed] = Lru(4096)
EMPTY: Mapping[str, Any] = {}


@dataclass(frozen=True)
class PlanScope:
    """Everything deciding about one plan reads."""

    pkg: Package
    plan: Plan
    rendered: Rendered
    index: PlanIndex
    observed: Mapping[Ref, Mapping[str, Any]]
    values: Mapping[str, Any]
    owner: Owner
    now: datetime
    settings: Settings

    def of(self, step: Step) -> StepScope:
        return StepScope(**{name: getattr(self, name) for name in plan_fields()}, step=step)


@functools.cache
def plan_fields() -> tuple[str, ...]:
    """PlanScope's field names (looked up once: every pass scopes each step of its plan)."""
    return tuple(f.name for f in fields(PlanScope))


@dataclass(frozen=True)
class StepScope(PlanScope):
    """Everything one step's decision reads: its plan's scope and the step."""

    step: Step


@dataclass(frozen=True)
class StepResult:
    record: Json
    actions: tuple[Action, ...] = ()
    events: tuple[Event, ...] = ()
    deadline: datetime | None = None


def task_scopes(scope: StepScope, record: Mapping[str, Any]) -> list[tasks.TaskScope]:
    return [
        tasks.TaskScope(
            pkg=scope.pkg, task=task, rendered=scope.rendered[(scope.step.name, task.name)],
            observed=scope.observed, values=scope.values, owner=scope.owner, plan=scope.plan.name,
            step=scope.step.name, now=scope.now, started_at=record.get("startedAt"),
        )
        for task in scope.index.tasks[scope.step.name]
    ]


def start_step(scope: StepScope, record: Mapping[str, Any]) -> StepResult:
    """Apply (or delete) what the step's tasks render; the step is IN_PROGRESS from now. An object of another
    Instance is not taken over (FATAL_ERROR) unless its task has `force: true`."""
    works = [(ts.task, tasks.start(ts)) for ts in task_scopes(scope, record)]
    taken = [(t, o, claim) for t, w in works if not t.force for o in w.applies if (claim := claimed(scope, o))]
    if taken:
        return StepResult({**record, "status": PlanStatus.FATAL_ERROR.value, "message": refused(taken)})
    actions: list[Action] = [applying(scope, w.applies, force=t.force, adopt=t.force) for t, w in works if w.applies]
    actions += [Delete(scope.step.name, w.deletes) for _, w in works if w.deletes]
    touched = [Ref.of(o) for _, w in works for o in w.applies] + [r for _, w in works for r in w.deletes]
    new = {**record, "status": PlanStatus.IN_PROGRESS.value, "startedAt": stamp(scope.now), "message": started(touched)}
    return StepResult(new, tuple(actions), deadline=timeout_at(new["startedAt"], scope.step.timeout))


def claimed(scope: StepScope, obj: Mapping[str, Any]) -> ownership.Claim | None:
    """The other Instance the live copy of `obj` belongs to, if any."""
    return ownership.foreign_claim(scope.observed.get(Ref.of(obj)), scope.owner.namespace, scope.owner.name)


def refused(taken: Sequence[tuple[Task, Mapping[str, Any], ownership.Claim]]) -> str:
    task, obj, claim = taken[0]
    more = f" (and {len(taken) - 1} more objects of other Instances)" if len(taken) > 1 else ""
    return (f"{Ref.of(obj)} belongs to {claim}{more}: kplan does not take over another Instance's objects; "
            f"set `force: true` on task {task.name} to adopt it")


def applying(scope: StepScope, objects: Sequence[Mapping[str, Any]], *, force: bool = False,
             adopt: bool = False) -> Apply:
    """Apply `objects` as the step's Instance, taking over first what its legacy manager (and, adopting,
    another Instance) owns on them."""
    owner = scope.owner
    handovers = tuple(h for o in objects if (h := ownership.handover(
        Ref.of(o), scope.observed.get(Ref.of(o)), owner.namespace, owner.name, adopt=adopt)))
    applied = tuple(claim_templates_as_live(o, scope.observed.get(Ref.of(o))) for o in objects)
    return Apply(scope.step.name, applied, force, owner.manager, handovers)


def started(touched: Sequence[Ref]) -> str:
    if not touched:
        return "started"
    more = f" and {len(touched) - 1} more" if len(touched) > 1 else ""
    return f"applied {touched[0]}{more}"


def check_step(scope: StepScope, record: Mapping[str, Any]) -> StepResult:
    """How a step in progress stands: COMPLETE, still waiting (and on what), ERROR or FATAL_ERROR."""
    checks = [(ts.task, tasks.check(ts)) for ts in task_scopes(scope, record)]
    fatal = next((c.fatal for _, c in checks if c.fatal), "")
    if fatal:
        return StepResult({**record, "status": PlanStatus.FATAL_ERROR.value, "message": fatal})
    failed = [(t, c) for t, c in checks if c.error]
    if failed:
        return fail_step(scope, record, failed)
    if all(c.done for _, c in checks):
        return StepResult({**record, "status": PlanStatus.COMPLETE.value, "message": ""})
    return wait_step(scope, record, [c for _, c in checks])


def wait_step(scope: StepScope, record: Mapping[str, Any], checks: Sequence[tasks.Check]) -> StepResult:
    waiting = next((c.waiting for c in checks if not c.done and c.waiting), "waiting")
    deadline = timeout_at(record.get("startedAt"), scope.step.timeout)
    if deadline is not None and aware(scope.now) >= deadline:
        message = f"did not finish within {scope.step.timeout:g}s; {waiting}"
        return StepResult(errored(record, message))
    applies = tuple(applying(scope, c.applies) for c in checks if c.applies)
    deadlines = [d for d in [deadline, *(c.deadline for c in checks)] if d is not None]
    new = {**record, "status": PlanStatus.IN_PROGRESS.value, "message": waiting}
    return StepResult(new, applies, deadline=min(deadlines) if deadlines else None)


def errored(record: Mapping[str, Any], message: str) -> Json:
    return {**record, "status": PlanStatus.ERROR.value, "message": message, "attempts": attempts(record) + 1}


def attempts(record: Mapping[str, Any]) -> int:
    value = record.get("attempts")
    return value if isinstance(value, int) else 0


def fail_step(scope: StepScope, record: Mapping[str, Any], failed: Sequence[tuple[Task, tasks.Check]]) -> StepResult:
    """ERROR, retried after backoff; FATAL_ERROR once a failed Job or object used up its task's retries."""
    count = attempts(record) + 1
    exhausted = [c for t, c in failed if c.limited and count > t.retries]
    if exhausted:
        message = f"{exhausted[0].error} (no retries left after {count} attempts)"
        return StepResult({**record, "status": PlanStatus.FATAL_ERROR.value, "message": message, "attempts": count})
    deletes = tuple(r for _, c in failed for r in c.deletes)
    actions = (Delete(scope.step.name, deletes),) if deletes else ()
    return StepResult(errored(record, failed[0][1].error), actions)


def retry_step(scope: StepScope, record: Mapping[str, Any]) -> StepResult:
    """An ERROR step starts again once its backoff passed and its failed Jobs and Pods are gone."""
    until = retry_at(record, scope.settings.backoff_base, scope.settings.backoff_max)
    if until is not None and aware(scope.now) < until:
        return StepResult(dict(record), deadline=until)
    blocking = tuple(r for ts in task_scopes(scope, record) for r in tasks.blockers(ts))
    if blocking:
        return StepResult(dict(record), (Delete(scope.step.name, blocking),))
    return start_step(scope, record)


def heal_step(plan: PlanScope, step: Step, record: Mapping[str, Any],
              later: frozenset[Ref] = frozenset()) -> StepResult:
    """Apply again what a started step rendered when the live object lost a rendered field or is gone
    (an object another Instance has adopted since is left to it; `later`: objects a later started step applied
    again, whose drift is that step's). A step known clean as it stands (CLEAN) is not checked again."""
    complete = record.get("status") == PlanStatus.COMPLETE
    seen = clean_key(plan, step, complete, later)
    if seen is not None and CLEAN.get(seen[0]) is seen[1]:
        return StepResult(record)  # type: ignore[arg-type]  # the decision's own copy, passed on unchanged
    scope = plan.of(step)
    actions: list[Action] = []
    events: list[Event] = []
    for ts in task_scopes(scope, record):
        healed = [(obj, why) for obj in tasks.drift_candidates(ts)
                  if Ref.of(obj) not in later and not claimed(scope, obj) and (why := drifted(obj, ts, complete))]
        if healed:  # forced: the field was kplan's, and whoever changed it took it over by doing so
            actions.append(applying(scope, [obj for obj, _ in healed], force=True))
            events += [drift_event(obj, why) for obj, why in healed if why != GONE or complete]
    if seen is not None and not actions and not events:
        CLEAN.put(*seen)
    return StepResult(dict(record), tuple(actions), tuple(events))


def known_clean(plan: PlanScope, step: Step, complete: bool, later: frozenset[Ref]) -> bool:
    """Whether heal_step would find `step` clean as it stands because CLEAN says so (a pass over a long plan asks
    this of every settled step before anything else)."""
    seen = clean_key(plan, step, complete, later)
    return seen is not None and CLEAN.get(seen[0]) is seen[1]


def clean_key(scope: PlanScope, step: Step, complete: bool,
              later: frozenset[Ref]) -> tuple[Hashable, Healed] | None:
    """The CLEAN key of `step` as it stands (and the step's Healed, which an entry holds), or None when some live
    object it would heal has no uid and resourceVersion to name its content.

    The key names the step's Healed by its id (one index's: its task renders and the kind each acts as) and lists,
    flat, the uid and resourceVersion of each live object it keeps, None for one that is gone (a uid is never empty,
    so the list reads back one way): built for every settled step on every pass, so as little as that.
    """
    healed = scope.index.healed[step.name]
    owner = scope.owner
    key: list[Any] = [id(healed), complete, later, owner.namespace, owner.name]
    observed = scope.observed
    for ref in healed.refs:
        live = observed.get(ref)
        if live is None:
            key.append(None)
            continue
        meta = live.get("metadata") or EMPTY
        uid, version = meta.get("uid"), meta.get("resourceVersion")
        if not uid or not version:
            return None
        key += (uid, version)
    return tuple(key), healed


def drifted(obj: Mapping[str, Any], ts: tasks.TaskScope, complete: bool) -> str:
    """Why `obj` must be applied again (GONE or the first differing field), or ""."""
    ref = Ref.of(obj)
    live = ts.observed.get(ref)
    if live is None:
        return "" if complete and tasks.restartable(ref) else GONE
    meta = live.get("metadata") or {}
    key = (id(obj), meta.get("uid"), meta.get("resourceVersion"))
    kept = DRIFTS.get(key) if key[1] and key[2] else None
    if kept is not None and kept[0] is obj:
        return kept[1]
    found = first_difference(claim_templates_as_live(obj, live), live) or ""
    if key[1] and key[2]:
        DRIFTS.put(key, (obj, found))
    return found


def drift_event(obj: Mapping[str, Any], why: str) -> Event:
    ref = Ref.of(obj)
    if why == GONE:
        return Event("DriftCorrected", f"{ref} was deleted; applied it again", ref=ref)
    return Event("DriftCorrected", f"{ref} drifted at {why}; applied it again", ref=ref)
