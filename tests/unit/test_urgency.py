"""Which Instances a manager that takes over reconciles first (engine.controller.urgency): those being deleted,
never reconciled, with a plan not ended, a spec not yet recorded, or a plan request not taken up; settled ones
(COMPLETE or FATAL_ERROR, spec recorded) come after, each group in the order given."""

from __future__ import annotations

from typing import Any

import pytest

from engine.controller.urgency import in_progress, start_order


def instance(name: str = "cache", *, plan_status: str | None = "COMPLETE", generation: int = 2,
             observed: int | None = 2, **extra: Any) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if plan_status is not None:
        status = {"activePlan": {"name": "deploy", "status": plan_status},
                  "plans": {"deploy": {"status": plan_status, "uid": "u1"}}, "observedGeneration": observed}
    obj: dict[str, Any] = {"apiVersion": "kplan.dev/v1alpha1", "kind": "Instance",
                           "metadata": {"name": name, "namespace": "shop", "generation": generation},
                           "spec": {"operatorVersion": {"name": "redis-0.1.0"}}, "status": status}
    for key, value in extra.items():
        obj[key] = {**obj[key], **value}
    return obj


@pytest.mark.parametrize("settled", ["COMPLETE", "FATAL_ERROR"])
def test_an_ended_plan_with_its_spec_recorded_is_settled(settled: str) -> None:
    assert not in_progress(instance(plan_status=settled))


@pytest.mark.parametrize("running", ["IN_PROGRESS", "PENDING", "ERROR"])
def test_a_plan_not_ended_is_in_progress(running: str) -> None:
    assert in_progress(instance(plan_status=running))


def test_a_never_reconciled_instance_is_in_progress() -> None:
    assert in_progress(instance(plan_status=None))


def test_a_deleted_instance_is_in_progress() -> None:
    assert in_progress(instance(metadata={"deletionTimestamp": "2026-12-01T10:00:00Z"}))


def test_a_spec_changed_since_the_last_pass_is_in_progress() -> None:
    assert in_progress(instance(generation=3, observed=2))


def test_a_plan_request_not_taken_up_is_in_progress_and_one_taken_up_is_not() -> None:
    requested = instance(spec={"planExecution": {"planName": "backup", "uid": "r1"}})
    assert in_progress(requested)
    taken = instance(spec={"planExecution": {"planName": "backup", "uid": "r1"}},
                     status={"lastRun": {"planExecutionUID": "r1"}})
    assert not in_progress(taken)


def test_start_order_puts_the_instances_in_progress_first_each_group_in_the_given_order() -> None:
    given = [instance("a"), instance("b", plan_status="IN_PROGRESS"), instance("c"), instance("d", plan_status=None),
             instance("e", generation=5)]

    first, later = start_order(given)

    assert [i["metadata"]["name"] for i in first] == ["b", "d", "e"]
    assert [i["metadata"]["name"] for i in later] == ["a", "c"]
