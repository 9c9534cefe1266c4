"""The health verdict of one object, and the messages that name it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from engine.health.objects import Obj, as_map, int_field, status_of


class Health(StrEnum):
    HEALTHY = "Healthy"
    PROGRESSING = "Progressing"
    FAILED = "Failed"


@dataclass(frozen=True)
class Status:
    """`message` is one line naming the object and what it waits for, or why it failed."""

    health: Health
    message: str


def describe(obj: Obj) -> str:
    """`Kind namespace/name`, or `Kind name` for a cluster-scoped object."""
    meta = as_map(obj.get("metadata"))
    kind, name, namespace = obj.get("kind") or "Object", meta.get("name") or "?", meta.get("namespace")
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def healthy(obj: Obj, detail: str) -> Status:
    return Status(Health.HEALTHY, f"{describe(obj)}: {detail}")


def progressing(obj: Obj, detail: str) -> Status:
    return Status(Health.PROGRESSING, f"{describe(obj)}: {detail}")


def failed(obj: Obj, detail: str) -> Status:
    return Status(Health.FAILED, f"{describe(obj)} failed: {detail}")


def stale(obj: Obj, *, strict: bool) -> Status | None:
    """Progressing while the controller has not seen the latest spec; `strict`: a missing observedGeneration counts."""
    generation = int_field(as_map(obj.get("metadata")), "generation")
    observed = status_of(obj).get("observedGeneration")
    if not isinstance(observed, int):
        if not strict or not generation:
            return None
        return progressing(obj, f"waiting for the controller to observe generation {generation}")
    if observed >= generation:
        return None
    return progressing(obj, f"waiting for the controller to observe generation {generation} (observed {observed})")
