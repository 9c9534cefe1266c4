"""Which plan run a command waits for, and when it has ended (from the Instance alone)."""

from __future__ import annotations

from typing import Any

import pytest

from engine.cli.following import Target, ended_with, outcome, standing, target_after
from engine.errors import PermanentError


def instance(generation: int, seen: int | None, plans: dict[str, Any], active: str = "deploy") -> dict[str, Any]:
    status: dict[str, Any] = {"plans": plans, "activePlan": {"name": active}}
    if seen is not None:
        status["observedGeneration"] = seen
    return {"metadata": {"name": "shop", "generation": generation}, "status": status}


def test_the_target_is_the_plans_next_run_at_the_changed_generation() -> None:
    before = instance(1, 1, {"backup": {"uid": "old", "status": "COMPLETE"}})
    changed = {"metadata": {"generation": 2}}

    assert target_after(before, "backup", changed) == Target("backup", "old", 2)
    assert target_after(before, "update", changed) == Target("update", None, 2)


@pytest.mark.parametrize(("seen", "record", "expected"), [
    (None, {"uid": "new", "status": "COMPLETE"}, None),  # the engine has not looked at the Instance yet
    (1, {"uid": "new", "status": "COMPLETE"}, None),  # nor at this generation
    (2, {"uid": "old", "status": "COMPLETE"}, None),  # the previous run, not the one the change starts
    (2, {"uid": "new", "status": "IN_PROGRESS"}, None),
    (2, {"uid": "new", "status": "ERROR"}, None),  # retried with backoff: not an end
    (2, {"uid": "new", "status": "COMPLETE"}, "COMPLETE"),
    (3, {"uid": "new", "status": "FATAL_ERROR"}, "FATAL_ERROR"),
])
def test_a_run_has_ended_once_the_new_run_of_the_plan_is_complete_or_fatal(
    seen: int | None, record: dict[str, Any], expected: str | None
) -> None:
    assert outcome(instance(2, seen, {"backup": record}), Target("backup", "old", 2)) == expected


def test_without_a_plan_the_active_plan_is_followed() -> None:
    found = instance(1, 1, {"deploy": {"uid": "u", "status": "COMPLETE"}, "backup": {"uid": "b", "status": "ERROR"}})
    assert outcome(found, Target(None, None, 1)) == "COMPLETE"
    assert outcome({**found, "status": {**found["status"], "activePlan": {"name": "backup"}}},
                   Target(None, None, 1)) is None


def test_a_fatal_end_is_an_error_naming_the_failing_step() -> None:
    found = instance(1, 1, {"deploy": {"uid": "u", "status": "FATAL_ERROR", "message": "step app: conflict"}})

    assert ended_with(instance(1, 1, {"deploy": {"status": "COMPLETE"}}), "COMPLETE", "deploy") == 0
    with pytest.raises(PermanentError, match="plan deploy of instance 'shop' ended FATAL_ERROR: step app: conflict"):
        ended_with(found, "FATAL_ERROR", "deploy")


def test_a_timeout_says_where_the_plan_stands() -> None:
    waiting = {"uid": "u", "status": "IN_PROGRESS", "phases": [{"name": "main", "steps": [
        {"name": "app", "status": "COMPLETE"},
        {"name": "db", "status": "IN_PROGRESS", "message": "StatefulSet ns/db: 0/3 ready"},
    ]}]}
    assert standing(instance(1, 1, {"deploy": waiting}), "deploy") == (
        "; plan deploy is IN_PROGRESS (step db: StatefulSet ns/db: 0/3 ready)"
    )
    assert standing({"metadata": {}}, "deploy") == "; no manager has picked it up (is the kplan manager running?)"
