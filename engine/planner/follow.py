"""Whether a decision made right after carrying out some actions could start anything those did not."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine import health
from engine.model import Package
from engine.planner.actions import Action, Apply, Delete
from engine.planner.refs import Ref

__all__ = ["may_advance"]

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
