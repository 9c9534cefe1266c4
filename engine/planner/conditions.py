"""The Ready and Progressing conditions, derived from the active plan; a transition time moves only with the status."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from engine.planner.status import PlanStatus
from engine.planner.times import stamp

__all__ = ["conditions"]

Json = dict[str, Any]


def conditions(status: Mapping[str, Any], prior: list[Any], now: datetime, generation: int | None,
               deleting: bool) -> list[Json]:
    """`[Ready, Progressing]` for `status`, keeping `lastTransitionTime` of `prior` where the status is unchanged."""
    ready, progressing = verdicts(status, deleting)
    return [condition("Ready", *ready, prior, now, generation), condition("Progressing", *progressing, prior, now,
                                                                           generation)]


def verdicts(status: Mapping[str, Any], deleting: bool) -> tuple[tuple[str, str, str], tuple[str, str, str]]:
    """(status, reason, message) of Ready and of Progressing."""
    active = status.get("activePlan") or {}
    name, state = active.get("name"), active.get("status")
    message = ((status.get("plans") or {}).get(name) or {}).get("message") or ""
    if deleting:
        return ("False", "Uninstalling", "the Instance is being deleted"), ("True", "Uninstalling", "uninstalling")
    if not name:
        return ("False", "NoPlan", "no plan has run yet"), ("False", "NoPlan", "no plan has run yet")
    if state == PlanStatus.COMPLETE:
        done = f"plan {name} is complete"
        return ("True", "PlanComplete", done), ("False", "PlanComplete", done)
    if state == PlanStatus.FATAL_ERROR:
        failed = f"plan {name} failed: {message}"
        return ("False", "PlanFailed", failed), ("False", "PlanFailed", failed)
    if state == PlanStatus.ERROR:
        retrying = f"plan {name} is retrying: {message}"
        return ("False", "PlanError", retrying), ("True", "PlanError", retrying)
    running = f"plan {name} is in progress"
    return ("False", "PlanInProgress", running), ("True", "PlanInProgress", running)


def condition(kind: str, state: str, reason: str, message: str, prior: list[Any], now: datetime,
              generation: int | None) -> Json:
    before = next((c for c in prior if isinstance(c, Mapping) and c.get("type") == kind), {})
    since = before.get("lastTransitionTime") if before.get("status") == state else None
    found: Json = {"type": kind, "status": state, "reason": reason, "message": message,
                   "lastTransitionTime": since or stamp(now)}
    if generation is not None:
        found["observedGeneration"] = generation
    return found
