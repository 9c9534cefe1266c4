"""Server-side apply over HTTP: field ownership, conflicts and force, removal, list merging, no-op applies and the
request checks of APISERVER §1."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient

from .helpers import configmap, deployment


def apply(dyn: DynamicClient, api_version: str, kind: str, body: dict[str, Any], namespace: str, manager: str,
          force: bool = False) -> Any:
    resource = dyn.resources.get(api_version=api_version, kind=kind)
    return dyn.server_side_apply(resource, body, namespace=namespace, field_manager=manager, force_conflicts=force)


def entries(obj: Any) -> dict[str, dict[str, Any]]:
    return {e["manager"]: e for e in obj.to_dict()["metadata"]["managedFields"]}


def test_apply_creates_the_object_with_one_apply_entry(dynamic_client: DynamicClient, widget_group: str,
                                                       namespace: str) -> None:
    body = {"apiVersion": f"{widget_group}/v1", "kind": "Widget", "metadata": {"name": "w1", "labels": {"app": "w"}},
            "spec": {"size": 2, "ports": [{"name": "http", "port": 80}]}}
    created = apply(dynamic_client, f"{widget_group}/v1", "Widget", body, namespace, "alice")
    mf = created.to_dict()["metadata"]["managedFields"]
    assert len(mf) == 1
    assert {k: mf[0][k] for k in ("manager", "operation", "apiVersion", "fieldsType")} == {
        "manager": "alice", "operation": "Apply", "apiVersion": f"{widget_group}/v1", "fieldsType": "FieldsV1"}
    assert mf[0]["fieldsV1"] == {"f:metadata": {"f:labels": {"f:app": {}}},
                                 "f:spec": {"f:ports": {'k:{"name":"http"}': {".": {}, "f:name": {}, "f:port": {}}},
                                            "f:size": {}}}
    assert created.metadata.generation == 1


def test_apply_create_answers_201_and_update_200(http: Any, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps/a"
    kwargs: dict[str, Any] = {"query": {"fieldManager": "alice"}, "content_type": "application/apply-patch+yaml"}
    assert http("PATCH", path, body=configmap("a", {"x": "1"}), **kwargs).status == 201
    assert http("PATCH", path, body=configmap("a", {"x": "2"}), **kwargs).status == 200


def test_applying_the_same_value_shares_ownership_without_conflict(dynamic_client: DynamicClient,
                                                                   namespace: str) -> None:
    apply(dynamic_client, "v1", "ConfigMap", configmap("a", {"x": "1"}), namespace, "alice")
    shared = apply(dynamic_client, "v1", "ConfigMap", configmap("a", {"x": "1"}), namespace, "bob")
    owners = entries(shared)
    assert owners["alice"]["fieldsV1"] == owners["bob"]["fieldsV1"] == {"f:data": {"f:x": {}}}


def test_applying_another_value_conflicts_with_the_owner(dynamic_client: DynamicClient, namespace: str) -> None:
    apply(dynamic_client, "apps/v1", "Deployment", deployment("web", replicas=2), namespace, "alice")
    with pytest.raises(ApiException) as err:
        apply(dynamic_client, "apps/v1", "Deployment", deployment("web", replicas=3), namespace, "bob")
    assert err.value.status == 409
    assert json.loads(err.value.body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas', "reason": "Conflict",
        "details": {"causes": [{"reason": "FieldManagerConflict", "message": 'conflict with "alice"',
                                "field": ".spec.replicas"}]},
        "code": 409}


def test_several_conflicts_are_listed_by_manager(dynamic_client: DynamicClient, namespace: str) -> None:
    apply(dynamic_client, "apps/v1", "Deployment", deployment("web", replicas=2), namespace, "alice")
    with pytest.raises(ApiException) as err:
        apply(dynamic_client, "apps/v1", "Deployment", deployment("web", replicas=3, image="nginx:2"), namespace,
              "bob")
    body = json.loads(err.value.body)
    assert body["message"] == ('Apply failed with 2 conflicts: conflicts with "alice":\n- .spec.replicas\n'
                               '- .spec.template.spec.containers[name="main"].image')
    assert len(body["details"]["causes"]) == 2


def test_force_moves_ownership(dynamic_client: DynamicClient, namespace: str) -> None:
    apply(dynamic_client, "apps/v1", "Deployment", deployment("web", replicas=2), namespace, "alice")
    forced = apply(dynamic_client, "apps/v1", "Deployment", deployment("web", replicas=3), namespace, "bob",
                   force=True)
    assert forced.spec.replicas == 3
    owners = entries(forced)
    assert "f:replicas" in owners["bob"]["fieldsV1"]["f:spec"]
    assert "f:replicas" not in owners["alice"]["fieldsV1"]["f:spec"]


def test_a_conflicting_apply_writes_nothing(dynamic_client: DynamicClient, namespace: str) -> None:
    first = apply(dynamic_client, "v1", "ConfigMap", configmap("a", {"x": "1"}), namespace, "alice")
    with pytest.raises(ApiException):
        apply(dynamic_client, "v1", "ConfigMap", configmap("a", {"x": "2"}), namespace, "bob")
    current = dynamic_client.resources.get(api_version="v1", kind="ConfigMap").get(name="a", namespace=namespace)
    assert current.metadata.resourceVersion == first.metadata.resourceVersion


def test_a_field_dropped_from_the_config_is_removed(dynamic_client: DynamicClient, namespace: str) -> None:
    apply(dynamic_client, "v1", "ConfigMap", configmap("a", {"x": "1"}, labels={"app": "a"}), namespace, "alice")
    after = apply(dynamic_client, "v1", "ConfigMap", configmap("a", {"x": "1"}), namespace, "alice")
    assert not (after.metadata.labels or {})


def test_a_field_still_owned_by_another_manager_survives_removal(dynamic_client: DynamicClient,
                                                                 namespace: str) -> None:
    apply(dynamic_client, "v1", "ConfigMap", configmap("a", {"x": "1", "y": "2"}), namespace, "alice")
    apply(dynamic_client, "v1", "ConfigMap", configmap("a", {"y": "2"}), namespace, "bob")
    after = apply(dynamic_client, "v1", "ConfigMap", configmap("a", {"x": "1"}), namespace, "alice")
    assert after.data.to_dict() == {"x": "1", "y": "2"}


def test_forced_away_fields_are_not_pruned_by_their_former_owner(dynamic_client: DynamicClient,
                                                                 namespace: str) -> None:
    apply(dynamic_client, "apps/v1", "Deployment", deployment("web", replicas=2), namespace, "alice")
    apply(dynamic_client, "apps/v1", "Deployment", deployment("web", replicas=3), namespace, "bob", force=True)
    body = deployment("web")
    del body["spec"]["replicas"]
    after = apply(dynamic_client, "apps/v1", "Deployment", body, namespace, "alice")
    assert after.spec.replicas == 3


def test_containers_merge_by_name_across_managers(dynamic_client: DynamicClient, namespace: str) -> None:
    apply(dynamic_client, "apps/v1", "Deployment", deployment("web"), namespace, "alice")
    sidecar = deployment("web")
    del sidecar["spec"]["replicas"]
    sidecar["spec"]["template"]["spec"]["containers"] = [{"name": "sidecar", "image": "envoy"}]
    merged = apply(dynamic_client, "apps/v1", "Deployment", sidecar, namespace, "bob")
    assert [c.name for c in merged.spec.template.spec.containers] == ["main", "sidecar"]
    sidecar["spec"]["template"]["spec"]["containers"] = []
    pruned = apply(dynamic_client, "apps/v1", "Deployment", sidecar, namespace, "bob")
    assert [c.name for c in pruned.spec.template.spec.containers] == ["main"]


def test_defaults_are_owned_by_nobody_after_apply(dynamic_client: DynamicClient, namespace: str) -> None:
    applied = apply(dynamic_client, "apps/v1", "Deployment", deployment("web"), namespace, "alice")
    fields = entries(applied)["alice"]["fieldsV1"]
    assert "f:revisionHistoryLimit" not in fields["f:spec"]
    assert applied.spec.revisionHistoryLimit == 10


def test_a_repeated_apply_is_not_a_write(dynamic_client: DynamicClient, namespace: str) -> None:
    first = apply(dynamic_client, "apps/v1", "Deployment", deployment("web"), namespace, "alice")
    again = apply(dynamic_client, "apps/v1", "Deployment", deployment("web"), namespace, "alice")
    assert again.metadata.resourceVersion == first.metadata.resourceVersion


def test_an_update_manager_owns_what_it_changed(dynamic_client: DynamicClient, namespace: str, http: Any) -> None:
    apply(dynamic_client, "apps/v1", "Deployment", deployment("web", replicas=2), namespace, "alice")
    http("PATCH", f"/apis/apps/v1/namespaces/{namespace}/deployments/web/scale", body={"spec": {"replicas": 5}},
         content_type="application/merge-patch+json", query={"fieldManager": "kubectl"})
    with pytest.raises(ApiException) as err:
        apply(dynamic_client, "apps/v1", "Deployment", deployment("web", replicas=2), namespace, "alice")
    assert json.loads(err.value.body)["message"] == (
        'Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: '
        ".spec.replicas")


def test_apply_without_field_manager_is_invalid(http: Any, namespace: str) -> None:
    response = http("PATCH", f"/api/v1/namespaces/{namespace}/configmaps/a", body=configmap("a"),
                    content_type="application/apply-patch+yaml")
    assert response.status == 422
    assert response.body["message"] == ('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is '
                                        "required for apply patch")


def test_force_on_a_merge_patch_is_invalid(http: Any, namespace: str) -> None:
    http("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=configmap("a"))
    response = http("PATCH", f"/api/v1/namespaces/{namespace}/configmaps/a", body={"data": {"x": "1"}},
                    content_type="application/merge-patch+json", query={"force": "true"})
    assert response.status == 422
    assert "force: Forbidden: may not be specified for non-apply patch" in response.body["message"]


def test_managed_fields_in_the_config_are_a_bad_request(http: Any, namespace: str) -> None:
    body = configmap("a")
    body["metadata"]["managedFields"] = [{"manager": "x"}]
    response = http("PATCH", f"/api/v1/namespaces/{namespace}/configmaps/a", body=body,
                    content_type="application/apply-patch+yaml", query={"fieldManager": "alice"})
    assert response.status == 400 and response.body["message"] == "metadata.managedFields must be nil"


def test_a_config_of_another_version_is_a_bad_request(http: Any, namespace: str) -> None:
    body = {**deployment("web"), "apiVersion": "apps/v1beta1"}
    response = http("PATCH", f"/apis/apps/v1/namespaces/{namespace}/deployments/web", body=body,
                    content_type="application/apply-patch+yaml", query={"fieldManager": "alice"})
    assert response.status == 400
    assert response.body["message"] == "invalid object type: apps/v1beta1, Kind=Deployment"


def test_an_undeclared_custom_field_fails_typing_with_500(http: Any, widget_group: str, namespace: str) -> None:
    body = {"apiVersion": f"{widget_group}/v1", "kind": "Widget", "metadata": {"name": "w1"},
            "spec": {"size": 1, "foo": 1}}
    response = http("PATCH", f"/apis/{widget_group}/v1/namespaces/{namespace}/widgets/w1", body=body,
                    content_type="application/apply-patch+yaml", query={"fieldManager": "alice"})
    assert response.status == 500 and "reason" not in response.body
    assert response.body["message"] == (f"failed to create typed patch object (/w1; {widget_group}/v1, "
                                        "Kind=Widget): .spec.foo: field not declared in schema")


def test_apply_to_the_status_of_a_missing_object_is_not_found(http: Any, widget_group: str, namespace: str) -> None:
    body = {"apiVersion": f"{widget_group}/v1", "kind": "Widget", "metadata": {"name": "w1"},
            "status": {"phase": "Ready"}}
    response = http("PATCH", f"/apis/{widget_group}/v1/namespaces/{namespace}/widgets/w1/status", body=body,
                    content_type="application/apply-patch+yaml", query={"fieldManager": "ctrl"})
    assert response.status == 404


def test_a_resource_version_in_the_config_is_a_precondition(http: Any, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps/a"
    kwargs: dict[str, Any] = {"query": {"fieldManager": "alice"}, "content_type": "application/apply-patch+yaml"}
    http("PATCH", path, body=configmap("a"), **kwargs)
    stale = configmap("a", {"x": "1"})
    stale["metadata"]["resourceVersion"] = "1"
    assert http("PATCH", path, body=stale, **kwargs).status == 409


def test_dry_run_apply_stores_nothing(http: Any, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps/a"
    response = http("PATCH", path, body=configmap("a"), content_type="application/apply-patch+yaml",
                    query={"fieldManager": "alice", "dryRun": "All"})
    assert response.status == 201
    assert http("GET", path).status == 404


def test_yaml_apply_bodies_are_accepted(http: Any, namespace: str) -> None:
    text = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: '1'\n"
    response = http("PATCH", f"/api/v1/namespaces/{namespace}/configmaps/a", body=text,
                    content_type="application/apply-patch+yaml", query={"fieldManager": "alice"})
    assert response.status == 201 and response.body["data"] == {"x": "1"}
