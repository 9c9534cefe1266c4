"""Driving whole plans through decide(): serial, parallel and dependsOn ordering, status shape, idempotence."""

from __future__ import annotations

import copy

import pytest
from planner_harness import (
    NOW,
    Cluster,
    Driver,
    applied,
    apply_task,
    cm,
    configmap,
    instance,
    job,
    job_ref,
    package,
    phase,
    plan,
    simple_package,
    step,
    step_statuses,
    steps_applied,
)

from engine.model import Strategy
from engine.planner import AddFinalizer, PlanStatus, decide


def test_install_starts_deploy_and_its_first_step_in_one_decision() -> None:
    driver = Driver(simple_package("a", "b"), instance())
    decision = driver.step()
    assert applied(decision) == ["ConfigMap/a"]
    record = decision.status["plans"]["deploy"]
    assert record["status"] == "IN_PROGRESS"
    assert record["startedAt"] == "2024-05-01T12:00:00Z"
    assert step_statuses(decision.status) == {"a": "IN_PROGRESS", "b": "PENDING"}
    assert decision.status["activePlan"] == {"name": "deploy", "uid": record["uid"], "status": "IN_PROGRESS"}
    assert decision.status["lastRun"] == {"plan": "deploy", "operatorVersion": "redis-0.3.0", "parameters": {}}
    ready = decision.status["conditions"][0]
    assert (ready["type"], ready["status"], ready["reason"]) == ("Ready", "False", "PlanInProgress")
    progressing = decision.status["conditions"][1]
    assert (progressing["type"], progressing["status"]) == ("Progressing", "True")
    assert [e.reason for e in decision.events] == ["PlanStarted"]


def test_serial_steps_start_only_after_the_previous_one_is_healthy() -> None:
    pkg = package(
        {"init.yaml": job("init"), "app.yaml": configmap("app")},
        [apply_task("init", "init.yaml"), apply_task("app", "app.yaml")],
        [plan("deploy", phase("main", step("init"), step("app")))],
    )
    driver = Driver(pkg, instance())
    assert applied(driver.step()) == ["Job/init"]
    waiting = driver.step(5)
    assert applied(waiting) == []
    assert driver.step_status("init")["message"] == "Job shop/init: 0/1 succeeded"
    assert step_statuses(waiting.status) == {"init": "IN_PROGRESS", "app": "PENDING"}
    driver.cluster.complete_job("init")
    assert applied(driver.step(5)) == ["ConfigMap/app"]
    assert step_statuses(driver.status) == {"init": "COMPLETE", "app": "IN_PROGRESS"}
    final = driver.step(1)
    assert final.status["plans"]["deploy"]["status"] == "COMPLETE"
    ready = final.status["conditions"][0]
    assert (ready["status"], ready["reason"]) == ("True", "PlanComplete")
    assert [e.reason for e in final.events] == ["PlanComplete"]


def test_parallel_steps_start_together() -> None:
    pkg = simple_package("a", "b", "c")
    parallel = plan("deploy", phase("main", step("a"), step("b"), step("c"), strategy=Strategy.PARALLEL))
    pkg = package(pkg.templates, pkg.tasks, [parallel])
    decision = Driver(pkg, instance()).step()
    assert steps_applied(decision) == ["a", "b", "c"]


def test_serial_phases_chain_and_parallel_phases_do_not() -> None:
    base = simple_package("a", "b")
    serial = package(base.templates, base.tasks, [plan("deploy", phase("one", step("a")), phase("two", step("b")))])
    assert steps_applied(Driver(serial, instance()).step()) == ["a"]
    parallel = package(base.templates, base.tasks, [plan("deploy", phase("one", step("a")), phase("two", step("b")),
                                                         strategy=Strategy.PARALLEL)])
    assert steps_applied(Driver(parallel, instance()).step()) == ["a", "b"]


def test_depends_on_runs_the_dag_layer_by_layer() -> None:
    names = ["a", "b", "c", "d"]
    base = simple_package(*names)
    dag = plan("deploy", phase("main", step("a"), step("b"), step("c", depends_on=("a",)),
                               step("d", depends_on=("b", "c")), strategy=Strategy.PARALLEL))
    driver = Driver(package(base.templates, base.tasks, [dag]), instance())
    layers = [steps_applied(driver.step(1)) for _ in range(4)]
    assert layers == [["a", "b"], ["c"], ["d"], []]
    assert driver.plan_status() == "COMPLETE"


def test_phase_status_is_derived_from_its_steps() -> None:
    base = simple_package("a", "b")
    pkg = package(base.templates, base.tasks, [plan("deploy", phase("one", step("a")), phase("two", step("b")))])
    driver = Driver(pkg, instance())
    driver.step()
    phases = {p["name"]: p["status"] for p in driver.status["plans"]["deploy"]["phases"]}
    assert phases == {"one": "IN_PROGRESS", "two": "PENDING"}
    driver.step(1)
    phases = {p["name"]: p["status"] for p in driver.status["plans"]["deploy"]["phases"]}
    assert phases == {"one": "COMPLETE", "two": "IN_PROGRESS"}


def test_deciding_twice_on_the_same_inputs_gives_the_same_decision() -> None:
    driver = Driver(simple_package("a", "b"), instance())
    driver.step()
    first = driver.decide()
    second = driver.decide()
    assert first == second
    assert first.status["plans"]["deploy"]["uid"] == second.status["plans"]["deploy"]["uid"]


def test_a_completed_plan_with_healthy_objects_gives_no_actions_and_the_same_status() -> None:
    driver = Driver(simple_package("a", "b"), instance())
    driver.run()
    before = copy.deepcopy(driver.status)
    later = driver.step(3600)
    assert later.actions == ()
    assert later.events == ()
    assert later.status == before
    assert later.requeue_after is None


def test_an_unchanged_step_keeps_its_last_updated_time() -> None:
    pkg = package({"init.yaml": job("init")}, [apply_task("init", "init.yaml")],
                  [plan("deploy", phase("main", step("init")))])
    driver = Driver(pkg, instance())
    driver.step()
    driver.step(5)
    stamped = driver.step_status("init")["lastUpdatedAt"]
    plan_stamp = driver.status["plans"]["deploy"]["lastUpdatedAt"]
    again = driver.step(60)
    assert driver.step_status("init")["lastUpdatedAt"] == stamped
    assert driver.status["plans"]["deploy"]["lastUpdatedAt"] == plan_stamp
    assert again.status == driver.decisions[-2].status


def test_observed_generation_follows_the_instance() -> None:
    inst = instance(generation=7)
    decision = decide(simple_package("a"), inst, {}, NOW)
    assert decision.status["observedGeneration"] == 7
    assert all(c["observedGeneration"] == 7 for c in decision.status["conditions"])


def test_an_instance_without_the_finalizer_gets_it() -> None:
    decision = decide(simple_package("a"), instance(finalizers=()), {}, NOW)
    assert decision.actions[0] == AddFinalizer()
    with_finalizer = decide(simple_package("a"), instance(), {}, NOW)
    assert not any(isinstance(a, AddFinalizer) for a in with_finalizer.actions)


def test_inventory_records_what_was_applied_with_its_plan() -> None:
    driver = Driver(simple_package("a"), instance())
    driver.step()
    assert driver.status["appliedResources"] == [
        {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "shop", "name": "a", "plan": "deploy"}
    ]


def test_rendered_objects_carry_kplan_stamps_and_owner() -> None:
    decision = Driver(simple_package("a"), instance()).step()
    obj = decision.actions[0].objects[0]  # type: ignore[union-attr]
    assert obj["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "kplan"
    assert obj["metadata"]["annotations"]["kplan.dev/step"] == "a"
    assert obj["metadata"]["ownerReferences"][0]["kind"] == "Instance"


def test_objects_missing_while_a_step_waits_are_applied_again() -> None:
    pkg = package({"init.yaml": job("init")}, [apply_task("init", "init.yaml")],
                  [plan("deploy", phase("main", step("init")))])
    driver = Driver(pkg, instance())
    driver.step()
    driver.cluster.objects.pop(job_ref("init"))
    decision = driver.step(1)
    assert applied(decision) == ["Job/init"]
    assert decision.events == ()


@pytest.mark.parametrize("state", [PlanStatus.IN_PROGRESS, PlanStatus.PENDING])
def test_plan_status_values_are_the_documented_strings(state: PlanStatus) -> None:
    assert state.value == state.name


def test_health_of_every_object_is_needed_for_completion() -> None:
    pkg = package({"both.yaml": configmap("x") + "---\n" + job("j")}, [apply_task("both", "both.yaml")],
                  [plan("deploy", phase("main", step("both")))])
    driver = Driver(pkg, instance(), Cluster())
    driver.step()
    driver.step(1)
    assert driver.step_status("both")["status"] == "IN_PROGRESS"
    assert cm("x") in driver.cluster.objects
    driver.cluster.complete_job("j")
    driver.step(1)
    assert driver.plan_status() == "COMPLETE"
