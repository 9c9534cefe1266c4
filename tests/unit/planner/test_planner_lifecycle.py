"""Lifecycle: upgrades with parameter migration, pruning after completion, drift repair, and uninstall."""

from __future__ import annotations

import copy

from planner_harness import (
    Cluster,
    Driver,
    applied,
    apply_task,
    cm,
    configmap,
    deleted,
    instance,
    job,
    package,
    phase,
    plan,
    ref,
    simple_package,
    step,
)

from engine.model import Package, Parameter, ParamType
from engine.planner import RemoveFinalizer, decide

OLD_PARAM = Parameter("legacy", default="x", has_default=True, required=False)
NEW_PARAM = Parameter("color", default="blue", has_default=True, required=False)
REPLICAS = Parameter("replicas", ParamType.INTEGER, default=3, has_default=True, required=False)
DELETION = "2024-05-01T13:00:00Z"


def versioned(version: str, params: tuple[Parameter, ...], with_upgrade: bool = True) -> Package:
    templates = {"app.yaml": configmap("app"), "mig.yaml": configmap("migrate")}
    plans = [plan("deploy", phase("main", step("app")))]
    if with_upgrade:
        plans.append(plan("upgrade", phase("main", step("mig"))))
    return package(templates, [apply_task("app", "app.yaml"), apply_task("mig", "mig.yaml")], plans, params, version)


def test_a_new_package_version_runs_the_upgrade_plan_and_migrates_parameters() -> None:
    old = versioned("0.3.0", (OLD_PARAM, REPLICAS))
    driver = Driver(old, instance({"legacy": "y", "replicas": 5}))
    driver.run()
    new = versioned("0.4.0", (NEW_PARAM, REPLICAS))
    driver.pkg, driver.previous_pkg = new, old
    driver.instance["spec"]["operatorVersion"] = {"name": "redis-0.4.0"}
    driver.instance["metadata"]["generation"] += 1
    decision = driver.step(1)
    assert decision.status["activePlan"]["name"] == "upgrade"
    assert applied(decision) == ["ConfigMap/migrate"]
    run = decision.status["lastRun"]
    assert run["operatorVersion"] == "redis-0.4.0"
    assert run["parameters"] == {"color": "blue", "replicas": 5}
    assert run["removedParameters"] == ["legacy"]
    removed = [e for e in decision.events if e.reason == "ParametersRemoved"]
    assert len(removed) == 1 and "legacy" in removed[0].message
    assert [h["operatorVersion"] for h in decision.status["history"]] == ["redis-0.3.0", "redis-0.4.0"]
    assert decision.status["history"][0]["parameters"] == {"legacy": "y", "replicas": 5}


def test_after_an_upgrade_the_dropped_parameter_triggers_nothing() -> None:
    old = versioned("0.3.0", (OLD_PARAM,))
    driver = Driver(old, instance({"legacy": "y"}))
    driver.run()
    driver.pkg, driver.previous_pkg = versioned("0.4.0", (NEW_PARAM,)), old
    driver.instance["spec"]["operatorVersion"] = {"name": "redis-0.4.0"}
    driver.run()
    assert driver.plan_status("upgrade") == "COMPLETE"
    later = driver.step(60)
    assert later.actions == () and later.events == ()


def test_upgrade_falls_back_to_deploy_without_upgrade_or_update_plans() -> None:
    old = versioned("0.3.0", (), with_upgrade=False)
    driver = Driver(old, instance())
    driver.run()
    driver.pkg = versioned("0.4.0", (), with_upgrade=False)
    driver.instance["spec"]["operatorVersion"] = {"name": "redis-0.4.0"}
    decision = driver.step(1)
    assert decision.status["activePlan"]["name"] == "deploy"
    assert decision.status["lastRun"]["operatorVersion"] == "redis-0.4.0"


def test_an_upgrade_waits_for_the_running_plan_of_the_old_version() -> None:
    old = package({"init.yaml": job("init")}, [apply_task("init", "init.yaml")],
                  [plan("deploy", phase("main", step("init")))], (), "0.3.0")
    driver = Driver(old, instance())
    driver.step()
    driver.pkg, driver.previous_pkg = versioned("0.4.0", ()), old
    driver.instance["spec"]["operatorVersion"] = {"name": "redis-0.4.0"}
    waiting = driver.step(1)
    assert waiting.status["activePlan"]["name"] == "deploy"
    assert waiting.status["lastRun"]["operatorVersion"] == "redis-0.3.0"
    driver.cluster.complete_job("init")
    decision = driver.step(1)
    assert decision.status["activePlan"]["name"] == "upgrade"


def test_objects_no_longer_rendered_are_pruned_after_the_plan_completes() -> None:
    driver = Driver(simple_package("a", "b"), instance())
    driver.run()
    driver.pkg = simple_package("a")
    driver.instance["spec"]["parameters"]["value"] = "v2"
    driver.instance["metadata"]["generation"] += 1
    driver.pkg = package(driver.pkg.templates, driver.pkg.tasks, driver.pkg.plans.values(),
                         [Parameter("value", default="v", has_default=True, required=False)])
    first = driver.step(1)
    assert deleted(first) == []  # the plan is not complete yet
    assert applied(first) == ["ConfigMap/a"]
    done = driver.step(1)
    assert deleted(done) == ["ConfigMap/b"]
    names = [e["name"] for e in done.status["appliedResources"]]
    assert names == ["a", "b"]  # b stays listed until it is observed gone
    gone = driver.step(1)
    assert [e["name"] for e in gone.status["appliedResources"]] == ["a"]
    assert gone.actions == ()


def test_objects_of_custom_plans_are_not_pruned() -> None:
    backup = plan("backup", phase("main", step("b")))
    pkg = package({"a.yaml": configmap("a"), "b.yaml": configmap("b")},
                  [apply_task("a", "a.yaml"), apply_task("b", "b.yaml")],
                  [plan("deploy", phase("main", step("a"))), backup])
    driver = Driver(pkg, instance())
    driver.run()
    driver.instance["spec"]["planExecution"] = {"planName": "backup", "uid": "r1"}
    driver.run()
    assert cm("b") in driver.cluster.objects
    driver.instance["spec"]["planExecution"] = {"planName": "deploy", "uid": "r2"}
    driver.run()
    assert cm("b") in driver.cluster.objects
    assert {e["name"]: e["plan"] for e in driver.status["appliedResources"]} == {"a": "deploy", "b": "backup"}


def test_drift_on_a_rendered_field_is_corrected_with_an_event() -> None:
    driver = Driver(simple_package("a"), instance())
    driver.run()
    driver.cluster.objects[cm("a")]["data"]["value"] = "tampered"
    driver.cluster.objects[cm("a")]["data"]["extra"] = "someone else's field"
    decision = driver.step(1)
    assert applied(decision) == ["ConfigMap/a"]
    assert decision.actions[0].force  # an edit by another manager took the field over: only force gets it back
    assert [(e.reason, e.message) for e in decision.events] == [
        ("DriftCorrected", "ConfigMap shop/a drifted at data.value; applied it again")
    ]
    assert decision.events[0].ref == cm("a")
    assert decision.status == driver.decisions[-2].status


def test_fields_only_the_live_object_has_are_not_drift() -> None:
    driver = Driver(simple_package("a"), instance())
    driver.run()
    live = driver.cluster.objects[cm("a")]
    live["metadata"].update(resourceVersion="42", uid="x", managedFields=[{"manager": "kplan"}])
    live["metadata"]["labels"]["team"] = "shop"
    assert driver.step(1).actions == ()


def test_a_deleted_object_of_a_completed_step_is_recreated() -> None:
    driver = Driver(simple_package("a"), instance())
    driver.run()
    del driver.cluster.objects[cm("a")]
    decision = driver.step(1)
    assert applied(decision) == ["ConfigMap/a"]
    assert decision.events[0].message == "ConfigMap shop/a was deleted; applied it again"


def test_a_completed_job_that_is_gone_is_not_run_again() -> None:
    pkg = package({"init.yaml": job("init")}, [apply_task("init", "init.yaml")],
                  [plan("deploy", phase("main", step("init")))])
    driver = Driver(pkg, instance())
    driver.step()
    driver.cluster.complete_job("init")
    driver.run()
    driver.cluster.objects.clear()
    assert driver.step(1).actions == ()


def uninstalling(pkg: Package) -> Driver:
    driver = Driver(pkg, instance())
    driver.run()
    driver.instance["metadata"]["deletionTimestamp"] = DELETION
    return driver


def test_uninstall_without_cleanup_deletes_the_inventory_then_releases_the_instance() -> None:
    driver = uninstalling(simple_package("a", "b"))
    decision = driver.step(1)
    assert deleted(decision) == ["ConfigMap/a", "ConfigMap/b"]
    assert RemoveFinalizer() not in decision.actions
    ready = decision.status["conditions"][0]
    assert (ready["status"], ready["reason"]) == ("False", "Uninstalling")
    released = driver.step(1)
    assert released.actions == (RemoveFinalizer(),)
    assert released.status["appliedResources"] == []


def test_uninstall_runs_the_cleanup_plan_first() -> None:
    pkg = package({"a.yaml": configmap("a"), "c.yaml": job("cleanup")},
                  [apply_task("a", "a.yaml"), apply_task("c", "c.yaml")],
                  [plan("deploy", phase("main", step("a"))), plan("cleanup", phase("main", step("c")))])
    driver = uninstalling(pkg)
    first = driver.step(1)
    assert first.status["activePlan"]["name"] == "cleanup"
    assert applied(first) == ["Job/cleanup"]
    assert deleted(first) == []
    assert deleted(driver.step(1)) == []
    driver.cluster.complete_job("cleanup")
    finishing = driver.step(1)
    assert driver.plan_status("cleanup") == "COMPLETE"
    assert sorted(deleted(finishing)) == ["ConfigMap/a", "Job/cleanup"]
    assert driver.step(1).actions == (RemoveFinalizer(),)


def test_cleanup_overrides_a_running_plan_and_runs_once_per_deletion() -> None:
    pkg = package({"init.yaml": job("init"), "c.yaml": configmap("c")},
                  [apply_task("init", "init.yaml"), apply_task("c", "c.yaml")],
                  [plan("deploy", phase("main", step("init"))), plan("cleanup", phase("main", step("c")))])
    driver = Driver(pkg, instance())
    driver.step()
    driver.instance["metadata"]["deletionTimestamp"] = DELETION
    first = driver.step(1)
    assert first.status["activePlan"]["name"] == "cleanup"
    uid = first.status["plans"]["cleanup"]["uid"]
    driver.step(1)
    assert driver.plan_status("cleanup") == "COMPLETE"
    assert driver.status["plans"]["cleanup"]["uid"] == uid


def test_uninstall_deletes_cluster_scoped_and_other_namespace_objects() -> None:
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: extra\n"
    other = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: far\n  namespace: elsewhere\ndata: {}\n"
    pkg = package({"ns.yaml": namespace, "far.yaml": other}, [apply_task("all", "ns.yaml", "far.yaml")],
                  [plan("deploy", phase("main", step("all")))])
    driver = Driver(pkg, instance(), Cluster())
    driver.step()
    driver.cluster.set_status(ref("Namespace", "extra", namespace=None), {"phase": "Active"})
    driver.run()
    driver.instance["metadata"]["deletionTimestamp"] = DELETION
    decision = driver.step(1)
    refs = [r for a in decision.actions for r in getattr(a, "refs", ())]
    assert ref("Namespace", "extra", namespace=None) in refs
    assert ref("ConfigMap", "far", namespace="elsewhere") in refs


def test_an_instance_being_deleted_without_the_finalizer_is_left_alone() -> None:
    driver = uninstalling(simple_package("a"))
    driver.instance["metadata"]["finalizers"] = []
    before = copy.deepcopy(driver.status)
    decision = decide(driver.pkg, driver.instance, driver.cluster.objects, driver.now)
    assert decision.actions == ()
    assert decision.status["plans"] == before["plans"]


def test_an_operator_version_with_any_name_settles_without_restarts() -> None:
    driver = Driver(simple_package("a"), instance(version="redis-custom-build"))
    driver.run()
    assert driver.status["lastRun"]["operatorVersion"] == "redis-custom-build"
    assert driver.status["history"][-1]["operatorVersion"] == "redis-custom-build"
    assert driver.step(60).actions == ()
