"""Task kinds: Toggle, Delete, Wait, Dummy, Operator (child Instances) and Pipe (files into ConfigMaps/Secrets)."""

from __future__ import annotations

import base64
from types import MappingProxyType

from planner_harness import (
    UID,
    Cluster,
    Driver,
    applied,
    cm,
    configmap,
    deleted,
    instance,
    package,
    phase,
    plan,
    ref,
    step,
)

from engine.model import Package, Parameter, ParamType, PipeFile, Task, TaskKind, WaitFor

FLAG = Parameter("enabled", ParamType.BOOLEAN, default=False, has_default=True, required=False)


def one_step(task: Task, templates: dict[str, str] | None = None, params: tuple[Parameter, ...] = ()) -> Package:
    return package(templates or {}, [task], [plan("deploy", phase("main", step("only", task.name)))], params)


def test_toggle_applies_when_its_parameter_is_true() -> None:
    pkg = one_step(Task("t", TaskKind.TOGGLE, resources=("x.yaml",), parameter="enabled"), {"x.yaml": configmap("x")},
                   (FLAG,))
    decision = Driver(pkg, instance({"enabled": True})).step()
    assert applied(decision) == ["ConfigMap/x"]


def test_toggle_deletes_when_its_parameter_is_false() -> None:
    pkg = one_step(Task("t", TaskKind.TOGGLE, resources=("x.yaml",), parameter="enabled"), {"x.yaml": configmap("x")},
                   (FLAG,))
    driver = Driver(pkg, instance({"enabled": True}))
    driver.run()
    driver.change_spec(enabled=False)
    decision = driver.step(1)
    assert deleted(decision) == ["ConfigMap/x"]
    assert applied(decision) == []
    driver.step(1)
    assert driver.plan_status() == "COMPLETE"
    assert driver.status["appliedResources"] == []


def test_delete_is_done_when_every_object_is_gone() -> None:
    pkg = one_step(Task("d", TaskKind.DELETE, resources=("x.yaml", "y.yaml")),
                   {"x.yaml": configmap("x"), "y.yaml": configmap("y")})
    cluster = Cluster([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "shop"}}])
    driver = Driver(pkg, instance(), cluster)
    decision = driver.step()
    assert deleted(decision) == ["ConfigMap/x", "ConfigMap/y"]
    cluster.put({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "shop"}})
    driver.step(1)
    assert driver.step_status("only")["message"] == "waiting for ConfigMap shop/x to be deleted"
    cluster.objects.clear()
    driver.step(1)
    assert driver.plan_status() == "COMPLETE"


def ready(status: str = "True") -> dict[str, object]:
    return {"conditions": [{"type": "Ready", "status": status}]}


def test_wait_for_a_named_object_condition() -> None:
    pkg = one_step(Task("w", TaskKind.WAIT, wait_for=(WaitFor("Deployment/web"),), timeout=120))
    web = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"}}
    cluster = Cluster([web])
    driver = Driver(pkg, instance(), cluster)
    assert driver.step().actions == ()
    waiting = driver.step(1)
    assert driver.step_status("only")["message"] == "waiting for Deployment shop/web to have condition Ready=True"
    assert waiting.requeue_after == 119.0
    cluster.set_status(ref("Deployment", "web", "apps/v1"), ready())
    driver.step(1)
    assert driver.plan_status() == "COMPLETE"


def test_wait_for_objects_a_template_renders() -> None:
    pkg = one_step(Task("w", TaskKind.WAIT, wait_for=(WaitFor("x.yaml", "Synced"),)), {"x.yaml": configmap("x")})
    cluster = Cluster([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "shop"},
                        "status": {"conditions": [{"type": "Synced", "status": "True"}]}}])
    driver = Driver(pkg, instance(), cluster)
    assert driver.step().actions == ()
    driver.step(1)
    assert driver.plan_status() == "COMPLETE"


def test_wait_times_out_into_an_error() -> None:
    pkg = one_step(Task("w", TaskKind.WAIT, wait_for=(WaitFor("Deployment/web"),), timeout=30))
    driver = Driver(pkg, instance())
    driver.step()
    driver.step(31)
    record = driver.step_status("only")
    assert record["status"] == "ERROR"
    assert record["message"].startswith("timed out after 30s waiting for Deployment shop/web")


def test_wait_for_an_unknown_kind_without_api_version_is_fatal() -> None:
    pkg = one_step(Task("w", TaskKind.WAIT, wait_for=(WaitFor("Widget/w"),)))
    decision = Driver(pkg, instance()).step()
    assert decision.status["plans"]["deploy"]["status"] == "FATAL_ERROR"
    assert "apiVersion/kind/name" in decision.status["plans"]["deploy"]["message"]


def test_wait_accepts_api_version_kind_name() -> None:
    pkg = one_step(Task("w", TaskKind.WAIT, wait_for=(WaitFor("example.com/v1/Widget/w"),)))
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "shop"},
              "status": ready()}
    driver = Driver(pkg, instance(), Cluster([widget]))
    driver.step()
    driver.step(1)
    assert driver.plan_status() == "COMPLETE"


def test_dummy_done_completes() -> None:
    driver = Driver(one_step(Task("d", TaskKind.DUMMY)), instance())
    driver.step()
    driver.step(1)
    assert driver.plan_status() == "COMPLETE"


def test_dummy_not_done_stays_in_progress() -> None:
    driver = Driver(one_step(Task("d", TaskKind.DUMMY, done=False)), instance())
    driver.step()
    driver.step(1)
    assert driver.step_status("only")["status"] == "IN_PROGRESS"
    assert driver.step_status("only")["message"] == "task d is not done (as told)"


def test_dummy_want_err_is_an_error_and_fatal_is_fatal() -> None:
    driver = Driver(one_step(Task("d", TaskKind.DUMMY, want_err=True)), instance())
    driver.step()
    driver.step(1)
    assert driver.step_status("only")["status"] == "ERROR"
    driver = Driver(one_step(Task("d", TaskKind.DUMMY, fatal=True)), instance())
    driver.step()
    driver.step(1)
    assert driver.step_status("only")["status"] == "FATAL_ERROR"


def operator_task(**extra: object) -> Task:
    params = MappingProxyType({"replicas": "{{ Params.replicas }}", "name": "plain", "tags": ["a", "{{ Name }}"],
                               **extra})
    return Task("db", TaskKind.OPERATOR, package="postgres", version="1.2.0", parameters=params)


REPLICAS = Parameter("replicas", ParamType.INTEGER, default=3, has_default=True, required=False)


def child(driver: Driver, name: str = "cache-postgres") -> dict[str, object]:
    return driver.cluster.objects[ref("Instance", name, "kplan.dev/v1alpha1")]


def test_operator_task_applies_a_child_instance_owned_by_the_parent() -> None:
    driver = Driver(one_step(operator_task(), params=(REPLICAS,)), instance())
    decision = driver.step()
    assert applied(decision) == ["Instance/cache-postgres"]
    obj = decision.actions[0].objects[0]  # type: ignore[union-attr]
    assert obj["spec"] == {"operatorVersion": {"name": "postgres-1.2.0"},
                           "parameters": {"name": "plain", "replicas": 3, "tags": ["a", "cache"]}}
    assert obj["metadata"]["namespace"] == "shop"
    assert obj["metadata"]["labels"]["kplan.dev/operator"] == "postgres"
    assert obj["metadata"]["labels"]["kplan.dev/instance"] == "cache"
    assert obj["metadata"]["ownerReferences"][0]["uid"] == UID


def test_operator_task_instance_name_is_rendered() -> None:
    task = Task("db", TaskKind.OPERATOR, package="postgres", version="1.2.0", instance_name="{{ Name }}-db")
    decision = Driver(one_step(task), instance()).step()
    assert applied(decision) == ["Instance/cache-db"]


def test_operator_task_is_done_when_the_child_deploy_plan_completes() -> None:
    driver = Driver(one_step(operator_task(), params=(REPLICAS,)), instance())
    driver.step()
    driver.step(1)
    assert driver.step_status("only")["status"] == "IN_PROGRESS"
    driver.cluster.set_status(ref("Instance", "cache-postgres", "kplan.dev/v1alpha1"),
                              {"observedGeneration": 1, "plans": {"deploy": {"status": "COMPLETE"}}})
    driver.step(1)
    assert driver.plan_status() == "COMPLETE"


def test_operator_task_waits_for_the_plan_the_child_runs_for_its_latest_spec() -> None:
    driver = Driver(one_step(operator_task(), params=(REPLICAS,)), instance())
    driver.step()
    child_ref = ref("Instance", "cache-postgres", "kplan.dev/v1alpha1")

    def child_runs_update(update: dict[str, str]) -> None:
        driver.cluster.set_status(child_ref, {
            "observedGeneration": 1, "activePlan": {"name": "update", "status": update["status"]},
            "plans": {"deploy": {"status": "COMPLETE"}, "update": update}})

    child_runs_update({"status": "IN_PROGRESS", "message": "Deployment shop/db: 1/3 replicas available"})
    driver.step(1)
    record = driver.step_status("only")
    assert record["status"] == "IN_PROGRESS" and "1/3 replicas available" in record["message"]
    child_runs_update({"status": "COMPLETE"})
    driver.step(1)
    assert driver.plan_status() == "COMPLETE"


def test_operator_task_fails_when_the_child_fails() -> None:
    driver = Driver(one_step(operator_task(), params=(REPLICAS,)), instance())
    driver.step()
    driver.cluster.set_status(ref("Instance", "cache-postgres", "kplan.dev/v1alpha1"), {
        "observedGeneration": 1, "plans": {"deploy": {"status": "FATAL_ERROR", "message": "boom"}}})
    driver.step(1)
    record = driver.step_status("only")
    assert record["status"] == "FATAL_ERROR"
    assert "boom" in record["message"]


POD = """apiVersion: v1
kind: Pod
metadata:
  name: gen
spec:
  restartPolicy: Never
  containers:
    - name: main
      image: busybox
      terminationMessagePath: /out/token
"""


def pipe_package() -> Package:
    pipe = Task("gen", TaskKind.PIPE, pod="pod.yaml", pipe=(PipeFile("/out/token", "Secret", "token"),))
    use = Task("use", TaskKind.APPLY, resources=("use.yaml",))
    templates = {"pod.yaml": POD, "use.yaml": configmap("user", "{{ Pipes.token }}")}
    return package(templates, [pipe, use], [plan("deploy", phase("main", step("gen"), step("use")))])


def succeed(driver: Driver, message: str = "s3cr3t-token") -> None:
    terminated = {"terminated": {"exitCode": 0, "message": message}}
    driver.cluster.set_status(ref("Pod", "gen"), {"phase": "Succeeded", "containerStatuses": [
        {"name": "main", "state": terminated}]})


def test_pipe_stores_the_pod_output_and_later_templates_read_it() -> None:
    driver = Driver(pipe_package(), instance())
    assert applied(driver.step()) == ["Pod/gen"]
    succeed(driver)
    storing = driver.step(1)
    assert applied(storing) == ["Secret/cache-token"]
    secret = storing.actions[0].objects[0]  # type: ignore[union-attr]
    assert base64.b64decode(secret["data"]["token"]).decode() == "s3cr3t-token"
    assert secret["metadata"]["ownerReferences"][0]["uid"] == UID
    using = driver.step(1)
    assert applied(using) == ["ConfigMap/user"]
    assert using.actions[0].objects[0]["data"]["value"] == "s3cr3t-token"  # type: ignore[union-attr]
    driver.step(1)
    assert driver.plan_status() == "COMPLETE"
    assert {e["name"] for e in driver.status["appliedResources"]} == {"gen", "cache-token", "user"}
    assert driver.step(1).actions == ()


def test_pipe_without_the_file_in_a_termination_message_fails() -> None:
    driver = Driver(pipe_package(), instance())
    driver.step()
    driver.cluster.set_status(ref("Pod", "gen"), {"phase": "Succeeded", "containerStatuses": []})
    driver.step(1)
    assert driver.step_status("gen")["status"] == "FATAL_ERROR"
    assert "terminationMessagePath" in driver.step_status("gen")["message"]


def test_an_empty_pipe_file_is_stored_as_empty_text() -> None:
    driver = Driver(pipe_package(), instance())
    driver.step()
    driver.cluster.set_status(ref("Pod", "gen"), {"phase": "Succeeded", "containerStatuses": [
        {"name": "main", "state": {"terminated": {"exitCode": 0}}}]})  # the kubelet omits an empty message
    storing = driver.step(1)
    assert applied(storing) == ["Secret/cache-token"]
    assert storing.actions[0].objects[0]["data"]["token"] == ""  # type: ignore[union-attr]


def test_a_failed_pipe_pod_is_retried_like_a_job() -> None:
    pipe = Task("gen", TaskKind.PIPE, pod="pod.yaml", retries=1, pipe=(PipeFile("/out/token", "ConfigMap", "t"),))
    driver = Driver(package({"pod.yaml": POD}, [pipe], [plan("deploy", phase("main", step("gen")))]), instance())
    driver.step()
    driver.cluster.set_status(ref("Pod", "gen"), {"phase": "Failed", "reason": "Evicted"})
    decision = driver.step(1)
    assert driver.step_status("gen")["status"] == "ERROR"
    assert deleted(decision) == ["Pod/gen"]
    assert cm("cache-t") not in driver.cluster.objects
