"""RecentWrites, the runner's memory of its own writes until the watch caches show them: a write the cache has
not caught up with wins, and a write that released the last finalizer of a deleted object is not kept (the
object is gone, and its DELETED event may have been seen before the write's answer came back)."""

from __future__ import annotations

from typing import Any

from engine.planner import Ref
from engine.runner.observed import RecentWrites


def instance(version: str, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "kplan.dev/v1alpha1", "kind": "Instance",
            "metadata": {"name": "child", "namespace": "shop", "resourceVersion": version, **meta}}


REF = Ref.of(instance("1"))


def test_a_write_the_cache_has_not_seen_yet_is_believed() -> None:
    recent = RecentWrites()
    recent.remember(instance("7"))

    assert recent.resolve(REF, None) == instance("7")
    assert recent.resolve(REF, instance("5")) == instance("7")
    assert recent.resolve(REF, instance("7")) == instance("7") and len(recent) == 0


def test_releasing_the_last_finalizer_of_a_deleted_object_leaves_nothing_to_believe() -> None:
    recent = RecentWrites()
    recent.remember(instance("7", finalizers=["kplan.dev/cleanup"], deletionTimestamp="2024-05-01T12:00:00Z"))
    recent.observe("DELETED", instance("8", deletionTimestamp="2024-05-01T12:00:00Z"))  # the event came first

    recent.remember(instance("8", deletionTimestamp="2024-05-01T12:00:00Z"))  # then the patch's answer

    assert recent.resolve(REF, None) is None
    assert len(recent) == 0


def test_a_deleted_object_still_held_by_a_finalizer_is_kept() -> None:
    recent = RecentWrites()
    held = instance("7", finalizers=["other"], deletionTimestamp="2024-05-01T12:00:00Z")

    recent.remember(held)

    assert recent.resolve(REF, None) == held
