"""What lets a pass stop early or write less: `may_advance` (deciding again right after some actions could start a
step) and `quiet_until` (a status whose only news is what a step in progress waits on may wait)."""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

from planner_harness import NOW, SETTINGS, Cluster, Driver, apply_task, instance, job, package, phase, plan, step

from engine.planner import Apply, Delete, PlanStatus, Ref
from engine.planner.follow import any_failed, may_advance
from engine.planner.quiet import quiet_until
from engine.planner.status import steps_of
from engine.planner.times import stamp

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


def test_an_applied_object_that_failed_is_seen() -> None:
    pkg = package({}, [], [])
    failed = {**JOB, "status": {"failed": 1, "conditions": [{"type": "Failed", "status": "True"}]}}
    assert any_failed([pkg], [Apply("s", (CM, JOB))], observed(CM, failed))
    assert not any_failed([pkg], [Apply("s", (CM, JOB))], observed(CM, JOB))


def test_a_delete_may_always_advance_the_plan() -> None:
    assert may_advance([package({}, [], [])], [Delete("s", (Ref.of(JOB),))], {})


def running_job_plan() -> Driver:
    pkg = package({"j.yaml": job("j")}, [apply_task("j", "j.yaml")], [plan("deploy", phase("main", step("j")))])
    driver = Driver(pkg, instance(), Cluster())
    driver.step()  # the plan starts, its one step applies the Job
    return driver


def test_a_change_of_nothing_but_a_waiting_message_waits_until_the_step_stood_a_while() -> None:
    driver = running_job_plan()
    before = copy.deepcopy(driver.instance["status"])
    step_record = steps_of(before["plans"]["deploy"])["j"]
    assert step_record["status"] == PlanStatus.IN_PROGRESS
    after = driver.step(0.5).status
    assert steps_of(after["plans"]["deploy"])["j"]["message"] != step_record["message"]

    due = quiet_until(before, after, SETTINGS)

    assert due == NOW.replace(microsecond=0) + timedelta(seconds=SETTINGS.message_delay)
    assert stamp(NOW) == step_record["lastUpdatedAt"]


def test_a_transition_or_another_change_is_written_at_once() -> None:
    driver = running_job_plan()
    before = copy.deepcopy(driver.instance["status"])
    driver.cluster.complete_job("j")
    after = driver.step(0.5).status

    assert quiet_until(before, after, SETTINGS) is None  # the step completed
    changed = copy.deepcopy(before)
    changed["plans"]["deploy"]["phases"][0]["steps"][0]["message"] = "another"
    changed["observedGeneration"] = 7
    assert quiet_until(before, changed, SETTINGS) is None  # more than the message changed
    assert quiet_until(before, copy.deepcopy(before), SETTINGS) is None  # nothing changed at all
