"""One task of a started step, by kind: what starting it applies or deletes, and how it stands now."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine import health
from engine.model import Package, Task, TaskKind
from engine.planner import children, pipes, pods
from engine.planner.refs import Ref
from engine.planner.rendering import TaskRender
from engine.planner.stamping import Owner
from engine.planner.times import aware, timeout_at

__all__ = ["HEALED", "Check", "TaskScope", "Work", "blockers", "check", "drift_candidates", "kept", "mode", "start"]

Json = dict[str, Any]
HEALED = frozenset({TaskKind.APPLY, TaskKind.OPERATOR})  # the kinds of tasks whose objects drift repair keeps
RESTARTABLE = frozenset({("batch", "Job"), ("", "Pod")})  # run-to-completion kinds: deleted and re-created to retry


@dataclass(frozen=True)
class TaskScope:
    """One task of one step, with what it rendered and what the cluster shows."""

    pkg: Package
    task: Task
    rendered: TaskRender
    observed: Mapping[Ref, Mapping[str, Any]]
    values: Mapping[str, Any]
    owner: Owner
    plan: str
    step: str
    now: datetime
    started_at: str | None = None

    @property
    def refs(self) -> tuple[Ref, ...]:
        return self.rendered.refs


@dataclass(frozen=True)
class Work:
    """What starting a task does."""

    applies: tuple[Json, ...] = ()
    deletes: tuple[Ref, ...] = ()


@dataclass(frozen=True)
class Check:
    """How a started task stands. `error` is retried with backoff (`limited`: counted against the task's
    retries); `fatal` stops the plan; `applies`/`deletes` are what it needs done meanwhile."""

    done: bool = False
    waiting: str = ""
    error: str = ""
    limited: bool = False
    fatal: str = ""
    applies: tuple[Json, ...] = ()
    deletes: tuple[Ref, ...] = ()
    deadline: datetime | None = None


def mode(task: Task, values: Mapping[str, Any]) -> TaskKind:
    """The kind a task acts as: a Toggle is an Apply when its boolean parameter is true, else a Delete."""
    if task.kind is TaskKind.TOGGLE:
        return TaskKind.APPLY if values.get(task.parameter or "") is True else TaskKind.DELETE
    return task.kind


def start(scope: TaskScope) -> Work:
    kind = mode(scope.task, scope.values)
    if kind in (TaskKind.APPLY, TaskKind.PIPE, TaskKind.OPERATOR):
        return Work(applies=scope.rendered.objects)
    if kind is TaskKind.DELETE:
        return Work(deletes=scope.refs)
    return Work()


def check(scope: TaskScope) -> Check:
    kind = mode(scope.task, scope.values)
    checks = {
        TaskKind.APPLY: check_applied,
        TaskKind.DELETE: check_deleted,
        TaskKind.WAIT: check_wait,
        TaskKind.DUMMY: check_dummy,
        TaskKind.OPERATOR: check_child,
        TaskKind.PIPE: check_pipe,
    }
    return checks[kind](scope)


def kept(task: Task, kind: TaskKind, rendered: TaskRender, owner: Owner) -> tuple[Ref, ...]:
    """The objects a task acting as `kind` keeps in the cluster (what pruning must leave alone)."""
    if kind is TaskKind.PIPE:
        return rendered.refs + tuple(pipes.output_ref(p, owner) for p in task.pipe)
    return rendered.refs if kind in (TaskKind.APPLY, TaskKind.OPERATOR) else ()


def drift_candidates(scope: TaskScope) -> tuple[Json, ...]:
    """The objects whose live state must keep containing what was rendered."""
    return scope.rendered.objects if mode(scope.task, scope.values) in HEALED else ()


def blockers(scope: TaskScope) -> tuple[Ref, ...]:
    """Failed Jobs and Pods of the task still present: a retry waits until they are gone."""
    if mode(scope.task, scope.values) not in (TaskKind.APPLY, TaskKind.PIPE):
        return ()
    return tuple(r for r in scope.refs if restartable(r) and status_of(scope, r).health is health.Health.FAILED)


def restartable(ref: Ref) -> bool:
    return (ref.api_version.rpartition("/")[0], ref.kind) in RESTARTABLE


def status_of(scope: TaskScope, ref: Ref) -> health.Status:
    return health.compute(scope.observed.get(ref), scope.pkg.health, ref=str(ref))


def check_applied(scope: TaskScope) -> Check:
    """Done when every object is healthy; a failed object fails the task (a failed Job or Pod is deleted)."""
    statuses = [(ref, status_of(scope, ref)) for ref in scope.refs]
    for ref, status in statuses:
        if status.health is health.Health.FAILED:
            job = job_of(scope, ref)
            if job is not None and pods.behind(scope.observed, job):
                return Check(waiting=f"{status.message}; waiting for its pods' final status")
            return Check(error=failed_because(scope, ref, status), limited=True,
                         deletes=(ref,) if restartable(ref) else ())
    waiting = [(ref, status) for ref, status in statuses if status.health is not health.Health.HEALTHY]
    return Check(done=not waiting, waiting=explained(scope, *waiting[0]) if waiting else "")


def job_of(scope: TaskScope, ref: Ref) -> Mapping[str, Any] | None:
    """The Job `ref` names, as observed (None for any other kind)."""
    return scope.observed.get(ref) if (ref.api_version.rpartition("/")[0], ref.kind) == ("batch", "Job") else None


def failed_because(scope: TaskScope, ref: Ref, status: health.Status) -> str:
    """A failed object's message; for a Job, with why its failed pod failed."""
    job = job_of(scope, ref)
    why = pods.failure(scope.observed, job) if job is not None else None
    return f"{status.message}; {why}" if why else status.message


def explained(scope: TaskScope, ref: Ref, status: health.Status) -> str:
    """A waiting object's message; for a Job, with why its pod does not run when the scheduler cannot place it."""
    job = job_of(scope, ref)
    why = pods.unscheduled(scope.observed, job) if job is not None else None
    return f"{status.message}; {why}" if why else status.message


def check_deleted(scope: TaskScope) -> Check:
    present = [ref for ref in scope.refs if ref in scope.observed]
    return Check(done=not present, waiting=f"waiting for {present[0]} to be deleted" if present else "")


def check_wait(scope: TaskScope) -> Check:
    """Done when every named object has its condition True; past the task's timeout: an error."""
    unmet = [(ref, cond) for ref, cond in scope.rendered.waits if not condition_true(scope.observed.get(ref), cond)]
    if not unmet:
        return Check(done=True)
    waiting = f"waiting for {unmet[0][0]} to have condition {unmet[0][1]}=True"
    deadline = timeout_at(scope.started_at, scope.task.timeout)
    if deadline is not None and aware(scope.now) >= deadline:
        return Check(error=f"timed out after {scope.task.timeout:g}s {waiting}")
    return Check(waiting=waiting, deadline=deadline)


def condition_true(obj: Mapping[str, Any] | None, kind: str) -> bool:
    conditions = ((obj or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions if isinstance(c, Mapping))


def check_dummy(scope: TaskScope) -> Check:
    task = scope.task
    if task.fatal:
        return Check(fatal=f"task {task.name} failed fatally (as told)")
    if task.want_err:
        return Check(error=f"task {task.name} failed (as told)")
    return Check(done=True) if task.done else Check(waiting=f"task {task.name} is not done (as told)")


def check_child(scope: TaskScope) -> Check:
    ref = scope.refs[0]
    state, message = children.child_state(scope.observed.get(ref))
    if state == "COMPLETE":
        return Check(done=True)
    if state == "FATAL_ERROR":
        return Check(fatal=f"{ref} failed: {message}")
    return Check(waiting=f"{ref}: {message}")


def check_pipe(scope: TaskScope) -> Check:
    """Done when the pod Succeeded and every pipe file is stored; until then, store what the pod wrote."""
    ref = scope.refs[0]
    status = status_of(scope, ref)
    if status.health is health.Health.FAILED:
        return Check(error=status.message, limited=True, deletes=(ref,))
    pod = scope.observed.get(ref) or {}
    if (pod.get("status") or {}).get("phase") != "Succeeded":
        return Check(waiting=status.message)
    outputs = pipes.pipe_outputs(scope.task, pod, scope.owner, scope.plan, scope.step)
    if isinstance(outputs, str):
        return Check(error=f"{ref}: {outputs}", limited=True, deletes=(ref,))
    missing = [o for o in outputs if not stored(o, scope.observed.get(Ref.of(o)))]
    if missing:
        return Check(waiting=f"storing pipe files in {Ref.of(missing[0])}", applies=tuple(missing))
    return Check(done=True)


def stored(want: Mapping[str, Any], live: Mapping[str, Any] | None) -> bool:
    return live is not None and all((live.get("data") or {}).get(k) == v for k, v in want["data"].items())
