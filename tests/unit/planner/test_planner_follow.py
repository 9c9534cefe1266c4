"""What lets a pass stop early: `may_advance`, whether deciding again right after some actions could start a step."""

from __future__ import annotations

from typing import Any

from planner_harness import package

from engine.planner import Apply, Delete, Ref
from engine.planner.follow import may_advance

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "shop"}}
JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "shop"}}
COMPLETE = {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}


def observed(*objects: dict[str, Any]) -> dict[Ref, dict[str, Any]]:
    return {Ref.of(o): o for o in objects}


def test_an_apply_of_objects_all_healthy_may_advance_the_plan() -> None:
    pkg = package({}, [], [])
    assert may_advance([pkg], [Apply("s", (CM,))], observed(CM))


def test_an_apply_with_an_object_short_of_healthy_cannot_complete_its_step() -> None:
    pkg = package({}, [], [])
    assert not may_advance([pkg], [Apply("s", (CM, JOB))], observed(CM, JOB))
    assert not may_advance([pkg], [Apply("s", (CM,))], {})  # not observed: not healthy
    assert may_advance([pkg], [Apply("s", (CM, JOB))], observed(CM, {**JOB, "status": COMPLETE}))


def test_a_delete_may_always_advance_the_plan() -> None:
    assert may_advance([package({}, [], [])], [Delete("s", (Ref.of(JOB),))], {})
