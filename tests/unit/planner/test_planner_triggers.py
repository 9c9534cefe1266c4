"""Triggers: which plan the spec starts, restarts, refuses or queues behind the running one."""

from __future__ import annotations

import copy

import pytest
from planner_harness import (
    Driver,
    applied,
    apply_task,
    configmap,
    instance,
    job,
    package,
    phase,
    plan,
    simple_package,
    step,
    step_statuses,
)

from engine.model import Package, Parameter, ParamType
from engine.planner import ClearPlanExecution, Settings, decide

REPLICAS = Parameter("replicas", ParamType.INTEGER, default=3, has_default=True, required=False, minimum=1)
SCHEDULE = Parameter("schedule", default="daily", has_default=True, required=False, trigger="backup")
ZONE = Parameter("zone", default="a", has_default=True, required=False, immutable=True)


def pkg_with_plans(*, update: bool = True, job_in_deploy: bool = False) -> Package:
    templates = {"app.yaml": configmap("app", "{{ Params.replicas }}"), "b.yaml": configmap("b"),
                 "u.yaml": configmap("u"), "init.yaml": job("init")}
    tasks = [apply_task("app", "app.yaml"), apply_task("b", "b.yaml"), apply_task("u", "u.yaml"),
             apply_task("init", "init.yaml")]
    first = step("init") if job_in_deploy else step("app")
    plans = [plan("deploy", phase("main", first, step("app2", "app"))), plan("backup", phase("main", step("b")))]
    if update:
        plans.append(plan("update", phase("main", step("u"))))
    return package(templates, tasks, plans, [REPLICAS, SCHEDULE, ZONE])


def settled(pkg: Package, **params: object) -> Driver:
    driver = Driver(pkg, instance(params))
    driver.run()
    assert driver.plan_status() == "COMPLETE"
    return driver


def test_parameters_resolve_with_defaults_into_last_run() -> None:
    decision = decide(pkg_with_plans(), instance({"replicas": 5}), {}, Driver(pkg_with_plans(), {}).now)
    assert decision.status["lastRun"]["parameters"] == {"replicas": 5, "schedule": "daily", "zone": "a"}
    assert decision.actions[0].objects[0]["data"]["value"] == "5"  # type: ignore[union-attr]


def test_a_parameter_change_runs_its_trigger_plan() -> None:
    driver = settled(pkg_with_plans())
    driver.change_spec(schedule="hourly")
    decision = driver.step(1)
    assert decision.status["activePlan"]["name"] == "backup"
    assert applied(decision) == ["ConfigMap/b"]
    assert driver.status["lastRun"]["plan"] == "backup"


def test_a_parameter_without_trigger_runs_update_or_else_deploy() -> None:
    driver = settled(pkg_with_plans())
    driver.change_spec(replicas=5)
    assert driver.step(1).status["activePlan"]["name"] == "update"
    driver = settled(pkg_with_plans(update=False))
    driver.change_spec(replicas=5)
    decision = driver.step(1)
    assert decision.status["activePlan"]["name"] == "deploy"
    assert decision.status["plans"]["deploy"]["uid"] != driver.decisions[-2].status["plans"]["deploy"]["uid"]


def test_history_grows_when_parameters_change() -> None:
    driver = settled(pkg_with_plans(update=False))
    driver.change_spec(replicas=5)
    driver.step(1)
    history = driver.status["history"]
    assert [h["parameters"]["replicas"] for h in history] == [3, 5]
    assert history[-1]["operatorVersion"] == "redis-0.3.0"


def test_a_change_for_the_running_plan_restarts_it_with_the_new_values() -> None:
    driver = Driver(pkg_with_plans(update=False, job_in_deploy=True), instance())
    driver.step()
    first_uid = driver.status["plans"]["deploy"]["uid"]
    driver.change_spec(replicas=4)
    decision = driver.step(1)
    record = decision.status["plans"]["deploy"]
    assert record["uid"] != first_uid
    assert step_statuses(decision.status) == {"init": "IN_PROGRESS", "app2": "PENDING"}
    assert decision.status["lastRun"]["parameters"]["replicas"] == 4


def test_a_change_for_another_plan_waits_until_the_running_one_ends() -> None:
    driver = Driver(pkg_with_plans(job_in_deploy=True), instance())
    driver.step()
    driver.change_spec(schedule="hourly")
    waiting = driver.step(1)
    assert waiting.status["activePlan"]["name"] == "deploy"
    assert "b" not in [s for s in waiting.status["plans"]]
    driver.cluster.complete_job("init")
    driver.step(1)  # init complete, app2 applied
    driver.step(1)  # deploy complete: backup starts in the same decision
    assert driver.status["activePlan"]["name"] == "backup"
    assert driver.status["plans"]["deploy"]["status"] == "COMPLETE"
    assert driver.status["lastRun"]["parameters"]["schedule"] == "hourly"


def test_the_running_plan_keeps_its_values_while_another_plan_waits() -> None:
    driver = Driver(pkg_with_plans(job_in_deploy=True), instance())
    driver.step()
    driver.change_spec(schedule="hourly", replicas=3)
    driver.cluster.complete_job("init")
    decision = driver.step(1)
    assert decision.status["lastRun"]["parameters"]["schedule"] == "daily"
    assert applied(decision) == ["ConfigMap/app"]


def test_an_immutable_parameter_change_is_fatal_and_applies_nothing() -> None:
    driver = settled(pkg_with_plans())
    driver.change_spec(zone="b")
    decision = driver.step(1)
    assert decision.actions == ()
    record = decision.status["plans"]["update"]
    assert record["status"] == "FATAL_ERROR"
    assert record["message"] == "parameter 'zone' is immutable and cannot be changed after install"
    assert decision.status["activePlan"] == {"name": "update", "uid": record["uid"], "status": "FATAL_ERROR"}
    assert decision.status["lastRun"]["parameters"]["zone"] == "a"
    again = driver.step(60)
    assert again.actions == () and again.status == decision.status


def test_reverting_a_refused_change_runs_the_plan_again() -> None:
    driver = settled(pkg_with_plans())
    driver.change_spec(zone="b")
    driver.step(1)
    driver.change_spec(zone="a")
    decision = driver.step(1)
    assert decision.status["activePlan"]["status"] == "IN_PROGRESS"
    assert applied(decision) == ["ConfigMap/u"]


def test_an_invalid_parameter_is_fatal_with_one_sentence() -> None:
    decision = Driver(pkg_with_plans(), instance({"replicas": 0})).step()
    assert decision.actions == ()
    record = decision.status["plans"]["deploy"]
    assert record["status"] == "FATAL_ERROR"
    assert record["message"] == "parameter 'replicas' must be at least 1, got 0"
    assert decision.status["conditions"][0]["reason"] == "PlanFailed"


def test_fixing_an_invalid_parameter_starts_the_plan() -> None:
    driver = Driver(pkg_with_plans(), instance({"replicas": 0}))
    driver.step()
    driver.change_spec(replicas=2)
    decision = driver.step(1)
    assert decision.status["plans"]["deploy"]["status"] == "IN_PROGRESS"
    assert applied(decision) == ["ConfigMap/app"]


def test_a_render_error_is_fatal_and_nothing_is_applied() -> None:
    pkg = package({"a.yaml": configmap("a"), "b.yaml": configmap("b", "{{ Params.missing }}")},
                  [apply_task("a", "a.yaml"), apply_task("b", "b.yaml")],
                  [plan("deploy", phase("main", step("a"), step("b")))])
    decision = Driver(pkg, instance()).step()
    assert decision.actions == ()
    record = decision.status["plans"]["deploy"]
    assert record["status"] == "FATAL_ERROR"
    assert record["message"].startswith("template b.yaml")
    assert "missing" in record["message"]


def test_changing_only_labels_triggers_nothing() -> None:
    driver = settled(pkg_with_plans())
    before = copy.deepcopy(driver.status)
    driver.instance["metadata"]["labels"] = {"team": "shop"}
    driver.instance["metadata"]["annotations"] = {"note": "hello"}
    decision = driver.step(10)
    assert decision.actions == ()
    assert decision.status == before


def test_plan_trigger_runs_the_plan_and_clears_the_request_once_recorded() -> None:
    driver = settled(pkg_with_plans())
    driver.instance["spec"]["planExecution"] = {"planName": "backup", "uid": "req-1"}
    driver.instance["metadata"]["generation"] += 1
    started = driver.step(1)
    assert started.status["activePlan"]["name"] == "backup"
    assert started.status["lastRun"]["planExecutionUID"] == "req-1"
    assert ClearPlanExecution() not in started.actions
    recorded = driver.step(1)
    assert ClearPlanExecution() in recorded.actions
    assert "planExecution" not in driver.instance["spec"]
    assert driver.step(1).status["activePlan"]["name"] == "backup"


def test_plan_trigger_of_the_same_plan_again_restarts_it() -> None:
    driver = settled(pkg_with_plans())
    driver.instance["spec"]["planExecution"] = {"planName": "deploy", "uid": "req-2"}
    uid = driver.status["plans"]["deploy"]["uid"]
    decision = driver.step(1)
    assert decision.status["plans"]["deploy"]["uid"] != uid
    assert applied(decision) == ["ConfigMap/app"]


def test_plan_trigger_of_an_unknown_plan_is_reported_and_cleared() -> None:
    driver = settled(pkg_with_plans())
    driver.instance["spec"]["planExecution"] = {"planName": "nope", "uid": "req-3"}
    decision = driver.step(1)
    assert ClearPlanExecution() in decision.actions
    assert [e.reason for e in decision.events] == ["PlanNotFound"]
    assert decision.status["activePlan"]["name"] == "deploy"


def test_a_fatal_plan_stays_stopped_until_the_spec_changes() -> None:
    pkg = package({"init.yaml": job("init")}, [apply_task("init", "init.yaml")],
                  [plan("deploy", phase("main", step("init")))], [REPLICAS])
    driver = Driver(pkg, instance())
    driver.step()
    driver.cluster.fail_job("init")
    driver.step(1)
    assert driver.plan_status() == "FATAL_ERROR"
    assert driver.step(600).actions == ()
    driver.cluster.objects.clear()
    driver.change_spec(replicas=3)  # the default: same values, but a new generation
    decision = driver.step(1)
    assert applied(decision) == ["Job/init"]
    assert driver.plan_status() == "IN_PROGRESS"


def test_a_fatal_plan_is_rerun_by_plan_trigger() -> None:
    driver = settled(simple_package("a"))
    driver.instance["status"]["plans"]["deploy"]["status"] = "FATAL_ERROR"
    driver.instance["spec"]["planExecution"] = {"planName": "deploy", "uid": "again"}
    assert applied(driver.step(1)) == ["ConfigMap/a"]


def test_history_keeps_only_the_newest_entries() -> None:
    driver = settled(pkg_with_plans(update=False))
    driver.settings = Settings(backoff_base=10.0, history_limit=2)
    for replicas in (4, 5, 6):
        driver.change_spec(replicas=replicas)
        driver.run()
    assert [h["parameters"]["replicas"] for h in driver.status["history"]] == [5, 6]


@pytest.mark.parametrize(
    ("change", "plan_name", "state"),
    [
        ({"replicas": 4}, "update", "IN_PROGRESS"),
        ({"schedule": "hourly"}, "backup", "IN_PROGRESS"),
        ({"replicas": 4, "schedule": "hourly"}, "update", "FATAL_ERROR"),  # two plans: refused
        ({"zone": "b"}, "update", "FATAL_ERROR"),
        ({"replicas": 3}, "deploy", "COMPLETE"),  # the default again: nothing to run
        ({"replicas": "three"}, "update", "FATAL_ERROR"),
    ],
)
def test_which_plan_a_parameter_change_starts(change: dict[str, object], plan_name: str, state: str) -> None:
    driver = settled(pkg_with_plans())
    driver.instance["spec"]["parameters"].update(change)
    decision = driver.step(1)
    assert (decision.status["activePlan"]["name"], decision.status["activePlan"]["status"]) == (plan_name, state)
    if state == "FATAL_ERROR":
        assert decision.actions == ()


def test_a_change_with_plans_that_disagree_is_refused_with_a_sentence() -> None:
    driver = settled(pkg_with_plans())
    driver.instance["spec"]["parameters"].update(replicas=4, schedule="hourly")
    message = driver.step(1).status["plans"]["update"]["message"]
    assert message.startswith("the change is refused because its parameters trigger different plans")
