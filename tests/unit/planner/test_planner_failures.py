"""Failures: failed Jobs retried with backoff then FATAL_ERROR, step timeouts, and record_failures()."""

from __future__ import annotations

from planner_harness import (
    SETTINGS,
    Driver,
    applied,
    apply_task,
    deleted,
    instance,
    job,
    job_ref,
    package,
    phase,
    plan,
    simple_package,
    step,
)

from engine.errors import ApiUnavailable, FieldConflict, RenderError
from engine.model import Package
from engine.planner import Failure, record_failures


def job_package(retries: int, timeout: float | None = None) -> Package:
    return package(
        {"init.yaml": job("init")},
        [apply_task("init", "init.yaml", retries=retries)],
        [plan("deploy", phase("main", step("init", timeout=timeout)))],
    )


def started(retries: int, timeout: float | None = None) -> Driver:
    driver = Driver(job_package(retries, timeout), instance())
    driver.step()
    return driver


def test_a_failed_job_makes_the_step_error_deletes_the_job_and_backs_off() -> None:
    driver = started(retries=2)
    driver.cluster.fail_job("init")
    decision = driver.step(1)
    record = driver.step_status("init")
    assert record["status"] == "ERROR"
    assert record["attempts"] == 1
    assert "BackoffLimitExceeded" in record["message"]
    assert deleted(decision) == ["Job/init"]
    assert decision.status["backoff"]["step"] == "init"
    assert decision.status["backoff"]["until"] == "2024-05-01T12:00:11Z"
    assert decision.requeue_after == 10.0
    assert driver.plan_status() == "ERROR"
    assert [e.reason for e in decision.events] == ["StepError"]


def test_the_job_is_applied_again_only_after_the_backoff() -> None:
    driver = started(retries=2)
    driver.cluster.fail_job("init")
    driver.step(1)
    early = driver.step(4)
    assert early.actions == ()
    assert early.requeue_after == 6.0
    later = driver.step(6)
    assert applied(later) == ["Job/init"]
    assert driver.step_status("init")["status"] == "IN_PROGRESS"
    assert driver.step_status("init")["startedAt"] == "2024-05-01T12:00:11Z"
    assert "backoff" not in later.status


def test_a_retry_waits_until_the_failed_job_is_gone() -> None:
    driver = started(retries=1)
    driver.cluster.fail_job("init")
    failed_job = driver.cluster.objects[job_ref("init")]
    driver.step(1)
    driver.cluster.put(failed_job)  # the delete has not gone through yet
    driver.now = driver.now.replace(second=30)
    blocked = driver.decide()
    assert deleted(blocked) == ["Job/init"]
    assert applied(blocked) == []
    assert blocked.status == driver.status
    driver.cluster.objects.pop(job_ref("init"))
    assert applied(driver.step(1)) == ["Job/init"]


def test_retries_exhausted_is_fatal_with_the_jobs_reason() -> None:
    driver = started(retries=1)
    driver.cluster.fail_job("init")
    driver.step(1)
    driver.step(20)
    driver.cluster.fail_job("init", reason="DeadlineExceeded", message="Job was active longer than specified")
    final = driver.step(1)
    record = driver.step_status("init")
    assert record["status"] == "FATAL_ERROR"
    assert record["attempts"] == 2
    assert "DeadlineExceeded: Job was active longer than specified" in record["message"]
    assert deleted(final) == []
    assert driver.plan_status() == "FATAL_ERROR"
    assert final.status["conditions"][0]["reason"] == "PlanFailed"
    assert "PlanFailed" in [e.reason for e in final.events]
    assert driver.step(600).actions == ()


def test_no_retries_means_the_first_failure_is_fatal() -> None:
    driver = started(retries=0)
    driver.cluster.fail_job("init")
    driver.step(1)
    assert driver.step_status("init")["status"] == "FATAL_ERROR"


def test_a_step_past_its_timeout_errors_and_is_retried_with_backoff() -> None:
    driver = started(retries=0, timeout=60)
    assert driver.decisions[0].requeue_after == 60.0
    waiting = driver.step(30)
    assert waiting.requeue_after == 30.0
    timed_out = driver.step(30)
    record = driver.step_status("init")
    assert record["status"] == "ERROR"
    assert record["message"].startswith("did not finish within 60s; Job shop/init: 0/1 succeeded")
    assert timed_out.requeue_after == 10.0
    retried = driver.step(10)
    assert applied(retried) == ["Job/init"]
    assert driver.step_status("init")["startedAt"] == "2024-05-01T12:01:10Z"
    assert retried.requeue_after == 60.0


def test_backoff_grows_exponentially_up_to_the_limit() -> None:
    driver = started(retries=10)
    untils = []
    for _ in range(3):
        driver.cluster.fail_job("init")
        decision = driver.step(1)
        untils.append(decision.requeue_after)
        driver.step(decision.requeue_after or 0)
    assert untils == [10.0, 20.0, 40.0]


def test_a_field_conflict_is_fatal_and_suggests_force() -> None:
    driver = Driver(simple_package("a"), instance())
    decision = driver.decide()
    conflict = FieldConflict("ConfigMap shop/a", [("helm", ".data.value")], "conflict with \"helm\": .data.value")
    failed = record_failures(decision, [Failure("a", conflict)], driver.now, SETTINGS)
    steps = failed.status["plans"]["deploy"]["phases"][0]["steps"]
    assert steps[0]["status"] == "FATAL_ERROR"
    assert "helm" in steps[0]["message"] and "force: true" in steps[0]["message"]
    assert failed.status["plans"]["deploy"]["status"] == "FATAL_ERROR"
    assert failed.status["activePlan"]["status"] == "FATAL_ERROR"
    assert failed.status["conditions"][0]["reason"] == "PlanFailed"
    assert failed.actions == decision.actions


def test_a_transient_failure_is_an_error_with_backoff() -> None:
    driver = Driver(simple_package("a", "b"), instance())
    decision = driver.decide()
    failed = record_failures(decision, [Failure("a", ApiUnavailable("the API server did not answer"))], driver.now,
                             SETTINGS)
    record = failed.status["plans"]["deploy"]["phases"][0]["steps"][0]
    assert (record["status"], record["attempts"]) == ("ERROR", 1)
    assert failed.status["plans"]["deploy"]["status"] == "ERROR"
    assert failed.status["backoff"]["step"] == "a"
    assert failed.requeue_after == 10.0
    assert failed.status["conditions"][0]["reason"] == "PlanError"
    assert "ActionFailed" in [e.reason for e in failed.events]


def test_a_recorded_transient_failure_is_retried_after_the_backoff() -> None:
    driver = Driver(simple_package("a"), instance())
    decision = record_failures(driver.decide(), [Failure("a", ApiUnavailable("down"))], driver.now, SETTINGS)
    driver.instance["status"] = decision.status
    assert driver.step(5).actions == ()
    assert applied(driver.step(5)) == ["ConfigMap/a"]


def test_record_failures_without_failures_changes_nothing() -> None:
    driver = Driver(simple_package("a"), instance())
    decision = driver.decide()
    assert record_failures(decision, [], driver.now) is decision


def test_a_failure_outside_any_step_is_reported_and_retried() -> None:
    driver = Driver(simple_package("a"), instance())
    decision = driver.decide()
    failed = record_failures(decision, [Failure("prune", ApiUnavailable("down"))], driver.now, SETTINGS)
    assert failed.status["plans"] == decision.status["plans"]
    assert failed.requeue_after == 10.0
    assert failed.events[-1].type == "Warning"


def test_other_kplan_errors_are_errors_not_fatal() -> None:
    driver = Driver(simple_package("a"), instance())
    failed = record_failures(driver.decide(), [Failure("a", RenderError("a.yaml", 3, "odd"))], driver.now)
    assert failed.status["plans"]["deploy"]["phases"][0]["steps"][0]["status"] == "ERROR"
