"""Feeding failed actions back into a Decision: a field conflict is FATAL_ERROR, anything else ERROR with backoff."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from engine.errors import FieldConflict
from engine.planner.actions import DEFAULT_SETTINGS, Decision, Event, Failure, Settings
from engine.planner.finish import backoff_deadline, settle
from engine.planner.status import PlanStatus, steps_of, with_steps
from engine.planner.times import aware, requeue_after

__all__ = ["record_failures"]

Json = dict[str, Any]
FORCE_HINT = "; set `force: true` on the task to take these fields over"


def record_failures(decision: Decision, failures: Sequence[Failure], now: datetime,
                    settings: Settings = DEFAULT_SETTINGS) -> Decision:
    """`decision` with the steps whose actions failed marked ERROR (retried with backoff) or FATAL_ERROR."""
    if not failures:
        return decision
    prior = decision.status
    status, events = dict(prior), list(decision.events)
    for failure in failures:
        status, event = with_failure(status, failure)
        events.append(event)
    conditions = prior.get("conditions") or []
    deleting = any(c.get("reason") == "Uninstalling" for c in conditions if isinstance(c, Mapping))
    generation = prior.get("observedGeneration")
    settled = settle(status, prior, now, settings, generation if isinstance(generation, int) else None, deleting)
    deadlines = [backoff_deadline(settled, settings), *retry_later(failures, status, now, settings)]
    requeue = requeue_after(deadlines, now)
    if decision.requeue_after is not None:
        requeue = min(requeue or decision.requeue_after, decision.requeue_after)
    return Decision(decision.actions, settled, tuple(events), requeue)


def with_failure(status: Json, failure: Failure) -> tuple[Json, Event]:
    """`status` with the failed step of the active plan marked; the Event tells what failed."""
    name = str((status.get("activePlan") or {}).get("name") or "")
    record = (status.get("plans") or {}).get(name) or {}
    step = steps_of(record).get(failure.step)
    message = failure_message(failure.error)
    event = Event("ActionFailed", f"{failure.step or 'instance'}: {message}", "Warning")
    if step is None:
        return status, event
    marked = marked_step(step, failure.error, message)
    plans = {**(status.get("plans") or {}), name: with_steps(record, {failure.step: marked})}
    return {**status, "plans": plans}, event


def failure_message(error: Exception) -> str:
    return f"{error}{FORCE_HINT}" if isinstance(error, FieldConflict) else str(error) or type(error).__name__


def marked_step(step: Mapping[str, Any], error: Exception, message: str) -> Json:
    attempts = int(step.get("attempts") or 0) + 1
    state = PlanStatus.FATAL_ERROR if isinstance(error, FieldConflict) else PlanStatus.ERROR
    return {**step, "status": state.value, "message": message, "attempts": attempts}


def retry_later(failures: Sequence[Failure], status: Mapping[str, Any], now: datetime,
                settings: Settings) -> list[datetime]:
    """Failures outside any step (prune, uninstall, finalizer) are retried after the base backoff."""
    name = (status.get("activePlan") or {}).get("name")
    steps = steps_of((status.get("plans") or {}).get(name) or {})
    if all(f.step in steps for f in failures):
        return []
    return [aware(now) + timedelta(seconds=settings.backoff_base)]
