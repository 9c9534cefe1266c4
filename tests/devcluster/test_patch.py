"""The non-apply PATCH types over HTTP: merge, JSON and strategic merge patches, their errors and preconditions."""

from __future__ import annotations

from typing import Any

from kubernetes import client

from .helpers import configmap, deployment

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


def test_merge_patch_merges_maps_and_null_deletes(core: client.CoreV1Api, namespace: str, http: Any) -> None:
    core.create_namespaced_config_map(namespace, configmap("a", {"x": "1", "y": "2"}))
    response = http("PATCH", f"/api/v1/namespaces/{namespace}/configmaps/a", body={"data": {"x": None, "z": "3"}},
                    content_type=MERGE)
    assert response.status == 200 and response.body["data"] == {"y": "2", "z": "3"}


def test_json_patch_applies_operations_in_order(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("a", {"x": "1"}))
    patched = core.patch_namespaced_config_map("a", namespace, [
        {"op": "test", "path": "/data/x", "value": "1"},
        {"op": "add", "path": "/data/y", "value": "2"},
        {"op": "remove", "path": "/data/x"},
    ])
    assert patched.data == {"y": "2"}


def test_a_failing_json_patch_test_is_invalid(core: client.CoreV1Api, namespace: str, http: Any) -> None:
    core.create_namespaced_config_map(namespace, configmap("a", {"x": "1"}))
    response = http("PATCH", f"/api/v1/namespaces/{namespace}/configmaps/a",
                    body=[{"op": "test", "path": "/data/x", "value": "2"}], content_type=JSON_PATCH)
    assert response.status == 422
    assert response.body["reason"] == "Invalid"
    assert response.body["message"] == "the server rejected our request due to an error in our request"
    assert response.body["details"] == {}


def test_too_many_json_patch_operations_are_too_large(core: client.CoreV1Api, namespace: str, http: Any) -> None:
    core.create_namespaced_config_map(namespace, configmap("a"))
    ops = [{"op": "add", "path": f"/data/k{i}", "value": "v"} for i in range(10001)]
    response = http("PATCH", f"/api/v1/namespaces/{namespace}/configmaps/a", body=ops, content_type=JSON_PATCH)
    assert response.status == 413


def test_strategic_merge_patch_merges_containers_by_name(apps: client.AppsV1Api, namespace: str) -> None:
    body = deployment("web")
    body["spec"]["template"]["spec"]["containers"].append({"name": "sidecar", "image": "envoy"})
    apps.create_namespaced_deployment(namespace, body)
    patched = apps.patch_namespaced_deployment("web", namespace, {
        "spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "envoy:2"}]}}}})
    assert [(c.name, c.image) for c in patched.spec.template.spec.containers] == [("main", "nginx:1.27"),
                                                                                   ("sidecar", "envoy:2")]


def test_strategic_merge_patch_delete_directive_removes_an_item(apps: client.AppsV1Api, namespace: str) -> None:
    body = deployment("web")
    body["spec"]["template"]["spec"]["containers"].append({"name": "sidecar", "image": "envoy"})
    apps.create_namespaced_deployment(namespace, body)
    patched = apps.patch_namespaced_deployment("web", namespace, {
        "spec": {"template": {"spec": {"containers": [{"name": "sidecar", "$patch": "delete"}]}}}})
    assert [c.name for c in patched.spec.template.spec.containers] == ["main"]


def test_strategic_merge_patch_on_a_custom_resource_is_unsupported(http: Any, widget_group: str,
                                                                   namespace: str) -> None:
    path = f"/apis/{widget_group}/v1/namespaces/{namespace}/widgets"
    http("POST", path, body={"apiVersion": f"{widget_group}/v1", "kind": "Widget", "metadata": {"name": "w1"},
                             "spec": {"size": 1}})
    response = http("PATCH", f"{path}/w1", body={"spec": {"size": 2}}, content_type=STRATEGIC)
    assert response.status == 415
    assert response.body["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")


def test_patching_a_missing_object_is_not_found(http: Any, namespace: str) -> None:
    response = http("PATCH", f"/api/v1/namespaces/{namespace}/configmaps/nope", body={"data": {}},
                    content_type=MERGE)
    assert response.status == 404 and response.body["message"] == 'configmaps "nope" not found'


def test_a_resource_version_in_a_patch_is_a_precondition(core: client.CoreV1Api, namespace: str,
                                                         http: Any) -> None:
    created = core.create_namespaced_config_map(namespace, configmap("a"))
    core.patch_namespaced_config_map("a", namespace, {"data": {"x": "1"}})
    stale = {"metadata": {"resourceVersion": created.metadata.resource_version}, "data": {"x": "2"}}
    response = http("PATCH", f"/api/v1/namespaces/{namespace}/configmaps/a", body=stale, content_type=MERGE)
    assert response.status == 409 and response.body["reason"] == "Conflict"


def test_an_unknown_patch_type_is_unsupported(http: Any, namespace: str, core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map(namespace, configmap("a"))
    response = http("PATCH", f"/api/v1/namespaces/{namespace}/configmaps/a", body={"data": {}},
                    content_type="text/plain")
    assert response.status == 415 and response.body["reason"] == "UnsupportedMediaType"


def test_a_patch_records_the_user_agent_as_manager(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("a", {"y": "0"}))
    patched = core.patch_namespaced_config_map("a", namespace, {"data": {"x": "1"}})
    managers = {(e.manager, e.operation) for e in patched.metadata.managed_fields}
    assert ("OpenAPI-Generator", "Update") in managers
