"""How the manager handles failures: a failed Job is ERROR and retried with backoff, then FATAL_ERROR with the
Job's reason; a template that does not render is FATAL_ERROR with nothing applied; a field owned by another
manager is a FATAL_ERROR naming field and manager, unless the task forces the apply, which takes it over."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.controller import Manager

if TYPE_CHECKING:
    from conftest import Changes, Kplan


def test_a_failing_job_is_retried_with_backoff_then_fatal_with_the_jobs_reason(
    kplan: Kplan, manager: Manager, changes: Changes
) -> None:
    kplan.install("failing", "bad")

    record = kplan.wait_plan("bad", "deploy", "FATAL_ERROR")

    step = record["phases"][0]["steps"][0]
    assert step["status"] == "FATAL_ERROR"
    assert "BackoffLimitExceeded" in step["message"]
    assert "BackoffLimitExceeded" in record["message"]
    jobs = {c.uid for c in changes.of("Job", "bad-job") if c.type == "ADDED"}
    assert len(jobs) == 3  # the first run and two retries (`retries: 2`)
    seen = [c.obj.get("status") or {} for c in changes.of("Instance", "bad")]
    errors = [s["plans"]["deploy"]["status"] for s in seen if "deploy" in (s.get("plans") or {})]
    assert "ERROR" in errors  # transient before it was given up
    assert errors[-1] == "FATAL_ERROR"


def test_a_template_render_error_is_fatal_and_applies_nothing_of_the_plan(
    kplan: Kplan, manager: Manager, changes: Changes
) -> None:
    kplan.install("broken-render", "broken")

    record = kplan.wait_plan("broken", "deploy", "FATAL_ERROR")

    assert "second.yaml" in record["message"]
    assert "the endpoint parameter must be set" in record["message"]
    assert kplan.kube.list("v1", "ConfigMap", kplan.namespace, label_selector="kplan.dev/instance=broken") == []
    assert [c for c in changes.all if c.kind == "ConfigMap"] == []


def test_a_render_error_is_fixed_by_changing_the_parameter(kplan: Kplan, manager: Manager) -> None:
    kplan.install("broken-render", "broken")
    kplan.wait_plan("broken", "deploy", "FATAL_ERROR")

    kplan.set_parameters("broken", endpoint="db:5432")

    kplan.wait(lambda: kplan.instance("broken")["status"]["activePlan"]["status"] == "COMPLETE")
    second = kplan.kube.get("v1", "ConfigMap", "broken-second", kplan.namespace)
    assert second["data"] == {"endpoint": "db:5432"}


def owned_by_someone_else(kplan: Kplan, name: str) -> None:
    kplan.kube.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": kplan.namespace},
                      "data": {"owner": "helm"}}, field_manager="helm")


def test_a_field_owned_by_another_manager_is_a_conflict_naming_field_and_manager(
    kplan: Kplan, manager: Manager
) -> None:
    owned_by_someone_else(kplan, "own-plain")
    owned_by_someone_else(kplan, "own-forced")

    kplan.install("ownership", "own")

    record = kplan.wait_plan("own", "deploy", "FATAL_ERROR")
    steps = kplan.steps("own", "deploy")
    assert steps["plain"]["status"] == "FATAL_ERROR"
    assert "helm" in steps["plain"]["message"] and ".data.owner" in steps["plain"]["message"]
    assert "plain" in record["message"]
    plain = kplan.kube.get("v1", "ConfigMap", "own-plain", kplan.namespace)
    assert plain["data"] == {"owner": "helm"}


def test_a_task_with_force_takes_the_field_over(kplan: Kplan, manager: Manager) -> None:
    owned_by_someone_else(kplan, "own-forced")

    kplan.install("ownership", "own")

    kplan.wait_plan("own", "deploy")
    forced = kplan.kube.get("v1", "ConfigMap", "own-forced", kplan.namespace)
    assert forced["data"] == {"owner": "kplan"}
    owners = {m["manager"] for m in forced["metadata"]["managedFields"] if "f:owner" in str(m.get("fieldsV1"))}
    assert owners == {f"kplan/{kplan.namespace}/own"}  # the Instance's own field manager
