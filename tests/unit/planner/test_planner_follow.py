"""What lets a pass stop early: `may_advance`, whether deciding again right after some actions could start a step,
and `ends_run`, whether a decision only ended the run in progress (the next one would do nothing)."""

from __future__ import annotations

import copy
from typing import Any

from planner_harness import (
    Driver,
    apply_task,
    instance,
    job,
    job_driver,
    job_ref,
    package,
    phase,
    plan,
    simple_package,
    step,
)

from engine.planner import Apply, ClearPlanExecution, Decision, Delete, Ref
from engine.planner.follow import ends_run, may_advance

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


# --- ends_run: a decision that only ended the run in progress is the last one ------------------------------------


def drive_to_the_end(driver: Driver, *, job_name: str | None = None) -> list[tuple[dict[str, Any], Decision]]:
    """Each (instance as read, decision) until the plan ends, the Job `job_name` completing once applied."""
    seen = []
    for _ in range(10):
        before = copy.deepcopy(driver.instance)
        decision = driver.step(1.0)
        seen.append((before, decision))
        if job_name and job_ref(job_name) in driver.cluster.objects:
            driver.cluster.complete_job(job_name)
        if driver.plan_status() in ("COMPLETE", "FATAL_ERROR"):
            return seen
    raise AssertionError("the plan did not end")


def assert_next_decision_does_nothing(driver: Driver) -> None:
    """Deciding again with the last status in view starts nothing and records nothing new."""
    again = driver.decide()
    assert again.actions == ()
    assert again.status == driver.status
    assert again.events == ()


def test_the_decision_completing_a_job_s_plan_ends_its_run_and_the_next_one_would_do_nothing() -> None:
    driver = Driver(package({"job.yaml": job("train")}, [apply_task("train", "job.yaml")],
                            [plan("deploy", phase("main", step("train")))]), instance())
    seen = drive_to_the_end(driver, job_name="train")
    assert [ends_run(before, decision) for before, decision in seen] == [False] * (len(seen) - 1) + [True]
    assert_next_decision_does_nothing(driver)


def test_the_decision_failing_a_plan_for_good_ends_its_run() -> None:
    driver = job_driver("train", {})
    driver.cluster.fail_job("train")
    before = copy.deepcopy(driver.instance)
    decision = driver.step(1.0)
    assert driver.plan_status() == "FATAL_ERROR"
    assert ends_run(before, decision)
    assert_next_decision_does_nothing(driver)


def test_a_decision_that_applies_or_starts_a_step_does_not_end_a_run() -> None:
    driver = Driver(simple_package("a", "b"), instance())
    seen = drive_to_the_end(driver)
    assert not any(ends_run(before, decision) for before, decision in seen[:-1])
    assert all(decision.actions for _, decision in seen[:-1])


def test_a_run_started_by_a_plan_request_is_not_ended_before_its_request_is_cleared() -> None:
    driver = Driver(simple_package("a"), instance(plan_execution={"planName": "deploy", "uid": "req-1"}))
    driver.run()
    driver.instance["spec"]["planExecution"] = {"planName": "deploy", "uid": "req-2"}
    before = copy.deepcopy(driver.instance)
    restarted = driver.step(1.0)  # starts the run again and applies a: not an end
    assert not ends_run(before, restarted)
    before = copy.deepcopy(driver.instance)
    ended = driver.step(1.0)  # a is healthy: the run is COMPLETE, and the request recorded is cleared
    assert driver.plan_status() == "COMPLETE"
    assert any(isinstance(a, ClearPlanExecution) for a in ended.actions)
    assert not ends_run(before, ended)


def test_a_run_that_was_over_already_or_an_instance_being_deleted_is_not_ended_again() -> None:
    driver = Driver(simple_package("a"), instance())
    driver.run()
    before = copy.deepcopy(driver.instance)
    assert not ends_run(before, driver.step(1.0))  # COMPLETE before and after
    deleting = copy.deepcopy(driver.instance)
    deleting["metadata"]["deletionTimestamp"] = "2024-05-01T13:00:00Z"
    running = {**deleting["status"], "plans": {"deploy": {**deleting["status"]["plans"]["deploy"],
                                                          "status": "IN_PROGRESS"}}}
    decision = Decision((), driver.status, (), None)
    assert ends_run({**deleting, "status": running}, decision) is False
    assert ends_run({**driver.instance, "status": running}, decision) is True
