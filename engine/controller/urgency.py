"""Which Instances a manager that just took over looks at first: those with work under way or waiting.

After a (re)start every Instance is reconciled once, and with many Instances that takes a while. Passes over
settled Instances only look for drift; the ones whose plan runs, that are being deleted or whose spec asks for a
plan not started yet are where progress is made, so they go first. A pure function of the cached Instances.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine.planner import PlanStatus

__all__ = ["in_progress", "start_order"]

SETTLED = frozenset({PlanStatus.COMPLETE.value, PlanStatus.FATAL_ERROR.value})
Json = Mapping[str, Any]


def in_progress(instance: Json) -> bool:
    """Whether the Instance has work under way or waiting: being deleted, never reconciled, its active plan not
    ended, its spec changed since the last pass recorded it, or a plan requested and not taken up yet."""
    meta = instance.get("metadata") or {}
    status = instance.get("status") or {}
    active = status.get("activePlan") or {}
    if meta.get("deletionTimestamp") or not active.get("name"):
        return True
    record = (status.get("plans") or {}).get(active["name"]) or {}
    if record.get("status") not in SETTLED:
        return True
    generation = meta.get("generation")
    if generation is not None and generation != status.get("observedGeneration"):
        return True
    request = (instance.get("spec") or {}).get("planExecution") or {}
    return bool(request.get("uid")) and request.get("uid") != (status.get("lastRun") or {}).get("planExecutionUID")


def start_order(instances: Iterable[Json]) -> tuple[list[Json], list[Json]]:
    """The Instances split into (in progress, settled), each in the order given."""
    first: list[Json] = []
    later: list[Json] = []
    for instance in instances:
        (first if in_progress(instance) else later).append(instance)
    return first, later
