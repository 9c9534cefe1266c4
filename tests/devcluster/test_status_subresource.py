"""The status and scale subresources: which endpoint may write what, generation, and Scale objects."""

from __future__ import annotations

from typing import Any

from kubernetes import client
from kubernetes.dynamic import DynamicClient

from .helpers import deployment

APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"


def test_the_main_endpoint_ignores_deployment_status(apps: client.AppsV1Api, namespace: str) -> None:
    apps.create_namespaced_deployment(namespace, deployment("web"))
    patched = apps.patch_namespaced_deployment("web", namespace, {"status": {"replicas": 7}})
    assert patched.status is None or patched.status.replicas is None


def test_the_status_endpoint_writes_status_only(apps: client.AppsV1Api, namespace: str) -> None:
    apps.create_namespaced_deployment(namespace, deployment("web"))
    patched = apps.patch_namespaced_deployment_status("web", namespace, {"spec": {"replicas": 9},
                                                                        "status": {"replicas": 1}})
    assert patched.status.replicas == 1 and patched.spec.replicas == 1
    assert patched.metadata.generation == 1


def test_status_writes_are_tracked_with_the_subresource(dynamic_client: DynamicClient, apps: client.AppsV1Api,
                                                        namespace: str, http: Any) -> None:
    apps.create_namespaced_deployment(namespace, deployment("web"))
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
              "status": {"observedGeneration": 1, "replicas": 1}}
    response = http("PATCH", f"/apis/apps/v1/namespaces/{namespace}/deployments/web/status", body=config,
                    content_type=APPLY, query={"fieldManager": "kube-controller-manager", "force": "true"})
    assert response.status == 200
    [entry] = [e for e in response.body["metadata"]["managedFields"] if e["manager"] == "kube-controller-manager"]
    assert entry["subresource"] == "status" and entry["operation"] == "Apply"
    assert entry["fieldsV1"] == {"f:status": {"f:observedGeneration": {}, "f:replicas": {}}}


def test_custom_status_endpoint_drops_spec_and_metadata_changes(http: Any, widget_group: str,
                                                                namespace: str) -> None:
    path = f"/apis/{widget_group}/v1/namespaces/{namespace}/widgets"
    http("POST", path, body={"apiVersion": f"{widget_group}/v1", "kind": "Widget", "metadata": {"name": "w1"},
                             "spec": {"size": 1}})
    patched = http("PATCH", f"{path}/w1/status", content_type=MERGE,
                   body={"metadata": {"labels": {"a": "b"}}, "spec": {"size": 2}, "status": {"phase": "Ready"}}).body
    assert patched["status"] == {"phase": "Ready"} and patched["spec"]["size"] == 1
    assert "labels" not in patched["metadata"] and patched["metadata"]["generation"] == 1


def test_custom_main_endpoint_keeps_the_old_status(http: Any, widget_group: str, namespace: str) -> None:
    path = f"/apis/{widget_group}/v1/namespaces/{namespace}/widgets"
    created = http("POST", path, body={"apiVersion": f"{widget_group}/v1", "kind": "Widget",
                                       "metadata": {"name": "w1"}, "spec": {"size": 1},
                                       "status": {"phase": "Dropped"}}).body
    assert "status" not in created
    http("PATCH", f"{path}/w1/status", content_type=MERGE, body={"status": {"phase": "Ready"}})
    patched = http("PATCH", f"{path}/w1", content_type=MERGE, body={"status": {"phase": "Hacked"}}).body
    assert patched["status"] == {"phase": "Ready"}


def test_two_controllers_applying_conditions_of_a_map_list_keep_both(http: Any, widget_group: str,
                                                                     namespace: str) -> None:
    path = f"/apis/{widget_group}/v1/namespaces/{namespace}/widgets"
    http("POST", path, body={"apiVersion": f"{widget_group}/v1", "kind": "Widget", "metadata": {"name": "w1"},
                             "spec": {"size": 1}})
    for manager, kind in (("a", "Ready"), ("b", "Synced")):
        config = {"apiVersion": f"{widget_group}/v1", "kind": "Widget", "metadata": {"name": "w1"},
                  "status": {"conditions": [{"type": kind, "status": "True"}]}}
        http("PATCH", f"{path}/w1/status", body=config, content_type=APPLY, query={"fieldManager": manager})
    current = http("GET", f"{path}/w1").body
    assert [c["type"] for c in current["status"]["conditions"]] == ["Ready", "Synced"]


def test_scale_reads_and_writes_deployment_replicas(apps: client.AppsV1Api, namespace: str) -> None:
    apps.create_namespaced_deployment(namespace, deployment("web", replicas=2))
    scale = apps.read_namespaced_deployment_scale("web", namespace)
    assert scale.spec.replicas == 2 and scale.status.selector == "app=web"
    apps.patch_namespaced_deployment_scale("web", namespace, {"spec": {"replicas": 4}})
    assert apps.read_namespaced_deployment("web", namespace).spec.replicas == 4
    scale = apps.read_namespaced_deployment_scale("web", namespace)
    scale.spec.replicas = 1
    replaced = apps.replace_namespaced_deployment_scale("web", namespace, scale)
    assert replaced.spec.replicas == 1 and replaced.kind == "Scale"


def test_a_negative_scale_is_invalid(http: Any, apps: client.AppsV1Api, namespace: str) -> None:
    apps.create_namespaced_deployment(namespace, deployment("web"))
    response = http("PATCH", f"/apis/apps/v1/namespaces/{namespace}/deployments/web/scale",
                    body={"spec": {"replicas": -1}}, content_type=MERGE)
    assert response.status == 422
    assert response.body["details"]["causes"][0]["field"] == "spec.replicas"


def test_custom_scale_follows_the_declared_paths(http: Any, widget_group: str, namespace: str) -> None:
    path = f"/apis/{widget_group}/v1/namespaces/{namespace}/widgets"
    http("POST", path, body={"apiVersion": f"{widget_group}/v1", "kind": "Widget", "metadata": {"name": "w1"},
                             "spec": {"size": 1, "replicas": 2, "selector": "app=w"}})
    scale = http("GET", f"{path}/w1/scale").body
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 2} and scale["status"]["selector"] == "app=w"
    http("PATCH", f"{path}/w1/scale", body={"spec": {"replicas": 5}}, content_type=MERGE)
    assert http("GET", f"{path}/w1").body["spec"]["replicas"] == 5
    bad = http("PATCH", f"{path}/w1/scale", body={"spec": {"replicas": -2}}, content_type=MERGE)
    assert bad.status == 422 and "should be a non-negative integer" in bad.body["message"]


def test_pod_status_starts_pending_with_a_qos_class(core: client.CoreV1Api, namespace: str) -> None:
    pod = core.create_namespaced_pod(namespace, {"metadata": {"name": "p"},
                                                 "spec": {"containers": [{"name": "c", "image": "busybox"}]},
                                                 "status": {"phase": "Running"}})
    assert (pod.status.phase, pod.status.qos_class) == ("Pending", "BestEffort")
    assert pod.spec.restart_policy == "Always" and pod.spec.scheduler_name == "default-scheduler"
