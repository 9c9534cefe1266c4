"""The manager runs plans: install → deploy to COMPLETE with the status of DESIGN §3; serial steps wait for the
previous step's health, parallel steps are applied together, dependsOn runs in topological layers; parameter
changes run their trigger plan, and an immutable parameter edited on the Instance is refused."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.controller import Manager

if TYPE_CHECKING:
    from conftest import Changes, Kplan


def test_install_runs_deploy_to_complete_with_the_status_of_the_design(kplan: Kplan, manager: Manager) -> None:
    kplan.install("serial", "web")

    record = kplan.wait_plan("web", "deploy")

    status = kplan.instance("web")["status"]
    assert status["activePlan"] == {"name": "deploy", "uid": record["uid"], "status": "COMPLETE"}
    assert status["observedGeneration"] == kplan.instance("web")["metadata"]["generation"]
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["Ready"]["status"] == "True"
    assert conditions["Progressing"]["status"] == "False"
    assert record["startedAt"] and record["lastUpdatedAt"]
    assert [(p["name"], p["status"]) for p in record["phases"]] == [("main", "COMPLETE")]
    assert [(s["name"], s["status"]) for s in record["phases"][0]["steps"]] == [("job", "COMPLETE"),
                                                                                ("config", "COMPLETE")]
    applied = {(r["kind"], r["name"]) for r in status["appliedResources"]}
    assert applied == {("Job", "web-job"), ("ConfigMap", "web-config")}
    owner = kplan.kube.get("v1", "ConfigMap", "web-config", kplan.namespace)["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"]) == ("Instance", "web")


def test_a_serial_step_is_applied_only_once_the_previous_one_is_healthy(
    kplan: Kplan, manager: Manager, changes: Changes
) -> None:
    kplan.install("serial", "web")
    kplan.wait_plan("web", "deploy")

    job_done = changes.completed("web-job")
    config_created = changes.added("ConfigMap", "web-config")

    assert changes.added("Job", "web-job") < job_done < config_created


def test_parallel_steps_are_applied_together(kplan: Kplan, manager: Manager, changes: Changes) -> None:
    kplan.install("parallel", "fan")
    kplan.wait_plan("fan", "deploy")

    created = [changes.added("Job", f"fan-{n}") for n in "abc"]
    first_done = min(changes.completed(f"fan-{n}") for n in "abc")

    assert max(created) < first_done


def test_depends_on_runs_the_steps_in_topological_layers(kplan: Kplan, manager: Manager, changes: Changes) -> None:
    kplan.install("dag", "diamond")
    kplan.wait_plan("diamond", "deploy")

    created = {n: changes.added("Job", f"diamond-{n}") for n in "abcd"}
    done = {n: changes.completed(f"diamond-{n}") for n in "abcd"}

    assert done["a"] < min(created["b"], created["c"])
    assert max(created["b"], created["c"]) < min(done["b"], done["c"])  # one layer, applied together
    assert max(done["b"], done["c"]) < created["d"]


def test_a_parameter_change_runs_the_plan_it_triggers(kplan: Kplan, manager: Manager) -> None:
    kplan.install("params", "svc")
    kplan.wait_plan("svc", "deploy")
    assert kplan.plan("svc", "backup") == {}

    kplan.set_parameters("svc", note="nightly")

    kplan.wait_plan("svc", "backup")
    backup = kplan.kube.get("v1", "ConfigMap", "svc-backup", kplan.namespace)
    assert backup["data"] == {"note": "nightly"}
    status = kplan.instance("svc")["status"]
    assert status["activePlan"]["name"] == "backup"
    assert status["lastRun"]["parameters"]["note"] == "nightly"


def test_a_parameter_change_with_the_default_trigger_runs_update(kplan: Kplan, manager: Manager) -> None:
    kplan.install("params", "svc")
    kplan.wait_plan("svc", "deploy")

    kplan.set_parameters("svc", size=3)

    kplan.wait_plan("svc", "update")
    assert kplan.kube.get("v1", "ConfigMap", "svc-config", kplan.namespace)["data"]["size"] == "3"


def test_an_immutable_parameter_edited_on_the_instance_is_fatal_and_touches_nothing(
    kplan: Kplan, manager: Manager
) -> None:
    kplan.install("params", "svc", {"zone": "a"})
    kplan.wait_plan("svc", "deploy")
    before = kplan.kube.get("v1", "ConfigMap", "svc-config", kplan.namespace)

    kplan.set_parameters("svc", zone="b")

    kplan.wait(lambda: kplan.instance("svc")["status"]["activePlan"]["status"] == "FATAL_ERROR")
    status = kplan.instance("svc")["status"]
    message = status["plans"][status["activePlan"]["name"]]["message"]
    assert "zone" in message and "immutable" in message
    after = kplan.kube.get("v1", "ConfigMap", "svc-config", kplan.namespace)
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert after["data"]["zone"] == "a"
