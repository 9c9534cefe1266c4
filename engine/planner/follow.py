"""Whether a decision made right after another (carrying out its actions, recording its status) could start anything
that one did not."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine import health
from engine.model import Package
from engine.planner import view
from engine.planner.actions import (
    Action,
    AddFinalizer,
    Apply,
    ClearPlanExecution,
    Decision,
    Delete,
    GenerateParameters,
    RemoveFinalizer,
)
from engine.planner.refs import Ref
from engine.planner.status import TERMINAL

__all__ = ["ends_run", "may_advance"]

# Actions that change the cluster or the Instance beyond its status: a decision after them sees something new.
ACTING = (Apply, Delete, AddFinalizer, ClearPlanExecution, RemoveFinalizer, GenerateParameters)

Observed = Mapping[Ref, Mapping[str, Any]]


def may_advance(packages: Sequence[Package], actions: Iterable[Action], observed: Observed) -> bool:
    """False when no step can have completed through `actions`: none deleted anything, and every Apply left some
    object short of healthy (a step completes only once all its objects are), by the rules of each of `packages`.

    Deciding again is then bound to start nothing new, so the caller can skip it.
    """
    for action in actions:
        if isinstance(action, Delete):
            return True
        if isinstance(action, Apply) and any(all_healthy(action.objects, pkg, observed) for pkg in packages):
            return True
    return False


def all_healthy(objects: Iterable[Mapping[str, Any]], pkg: Package, observed: Observed) -> bool:
    for obj in objects:
        ref = Ref.of(obj)
        if health.compute(observed.get(ref), pkg.health, ref=str(ref)).health is not health.Health.HEALTHY:
            return False
    return True


def ends_run(instance: Mapping[str, Any], decision: Decision) -> bool:
    """Whether `decision` about `instance` (as read before it) only ended the active plan's run: it acts on nothing
    but the status, the Instance is not being deleted, and the run in progress before (the same plan and uid) is
    COMPLETE or FATAL_ERROR in the new status.

    Deciding again with that status in view is bound to start nothing and record nothing new: a plan waiting for
    this one starts in the decision that ends it, that decision checked the drift of every step of the ended plan as
    the next would, and it already recorded the request, generation and conditions a next one would (a run it
    started itself is excluded: its plan request is cleared only by the next decision).
    """
    if view.deleting(instance) or any(isinstance(a, ACTING) for a in decision.actions):
        return False
    before, after = active_run(view.recorded_status(instance)), active_run(decision.status)
    return before is not None and before[:2] == (after or ())[:2] and before[2] not in TERMINAL \
        and after is not None and after[2] in TERMINAL


def active_run(status: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(plan, uid, status) of the active plan's record, or None when there is no run with a uid."""
    name = str((status.get("activePlan") or {}).get("name") or "")
    record = (status.get("plans") or {}).get(name) or {}
    uid = str(record.get("uid") or "")
    return (name, uid, str(record.get("status") or "")) if name and uid else None
