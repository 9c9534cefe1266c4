"""CustomResourceDefinitions: registration and conditions, discovery, schema validation (422 causes), defaults,
pruning, generation, versions and deletion."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from engine.devcluster.cluster import DevCluster

from .helpers import create_crd, wait_for, widget_crd

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def widgets(group: str, namespace: str) -> str:
    return f"/apis/{group}/v1/namespaces/{namespace}/widgets"


def body(group: str, name: str = "w1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"size": 3, **spec}}


def test_a_new_crd_is_established_with_its_names_accepted(devcluster: DevCluster, widget_group: str) -> None:
    code, crd = devcluster.request("GET", f"{CRDS}/widgets.{widget_group}")
    conditions = {c["type"]: c for c in crd["status"]["conditions"]}
    assert code == 200
    assert (conditions["Established"]["status"], conditions["Established"]["reason"]) == ("True",
                                                                                         "InitialNamesAccepted")
    assert (conditions["NamesAccepted"]["status"], conditions["NamesAccepted"]["reason"]) == ("True", "NoConflicts")
    assert crd["status"]["acceptedNames"]["kind"] == "Widget"
    assert crd["status"]["storedVersions"] == ["v1"]


def test_discovery_serves_the_new_resource(api_client: client.ApiClient, widget_group: str) -> None:
    groups = {g.name: g for g in client.ApisApi(api_client).get_api_versions().groups}
    assert groups[widget_group].preferred_version.version == "v1"


def test_the_resource_list_has_status_and_scale(http: Any, widget_group: str) -> None:
    listed = http("GET", f"/apis/{widget_group}/v1").body
    names = {r["name"]: r for r in listed["resources"]}
    assert names["widgets"]["shortNames"] == ["wd"] and names["widgets"]["namespaced"]
    assert set(names["widgets"]["verbs"]) == {"delete", "deletecollection", "get", "list", "patch", "create",
                                              "update", "watch"}
    assert {"widgets/status", "widgets/scale"} <= set(names)


def test_custom_objects_crud(custom: client.CustomObjectsApi, widget_group: str, namespace: str) -> None:
    created = custom.create_namespaced_custom_object(widget_group, "v1", namespace, "widgets", body(widget_group))
    assert created["metadata"]["generation"] == 1 and created["spec"]["replicas"] == 1
    fetched = custom.get_namespaced_custom_object(widget_group, "v1", namespace, "widgets", "w1")
    fetched["spec"]["size"] = 4
    replaced = custom.replace_namespaced_custom_object(widget_group, "v1", namespace, "widgets", "w1", fetched)
    assert replaced["metadata"]["generation"] == 2
    listed = custom.list_namespaced_custom_object(widget_group, "v1", namespace, "widgets")
    assert listed["kind"] == "WidgetList" and listed["items"][0]["kind"] == "Widget"
    custom.delete_namespaced_custom_object(widget_group, "v1", namespace, "widgets", "w1")
    assert custom.list_namespaced_custom_object(widget_group, "v1", namespace, "widgets")["items"] == []


def test_a_custom_replace_needs_a_resource_version(http: Any, widget_group: str, namespace: str) -> None:
    http("POST", widgets(widget_group, namespace), body=body(widget_group))
    response = http("PUT", f"{widgets(widget_group, namespace)}/w1", body=body(widget_group))
    assert response.status == 422
    assert response.body["message"] == (f'widgets.{widget_group} "w1" is invalid: metadata.resourceVersion: Invalid '
                                        "value: 0: must be specified for an update")
    assert response.body["details"]["kind"] == "widgets"


@pytest.mark.parametrize(("spec", "cause"), [
    ({"size": "big"}, {"reason": "FieldValueTypeInvalid", "field": "spec.size",
                       "message": 'Invalid value: "string": spec.size in body must be of type integer: "string"'}),
    ({"size": 11}, {"reason": "FieldValueInvalid", "field": "spec.size",
                    "message": "Invalid value: 11: spec.size in body should be less than or equal to 10"}),
    ({"size": 0}, {"reason": "FieldValueInvalid", "field": "spec.size",
                   "message": "Invalid value: 0: spec.size in body should be greater than or equal to 1"}),
    ({"size": 2, "color": "green"}, {"reason": "FieldValueNotSupported", "field": "spec.color",
                                     "message": 'Unsupported value: "green": supported values: "red", "blue"'}),
    ({}, {"reason": "FieldValueRequired", "field": "spec.size", "message": "Required value"}),
])
def test_schema_violations_are_422_with_causes(http: Any, widget_group: str, namespace: str,
                                               spec: dict[str, Any], cause: dict[str, str]) -> None:
    obj = body(widget_group)
    obj["spec"] = spec
    response = http("POST", widgets(widget_group, namespace), body=obj)
    assert response.status == 422 and response.body["reason"] == "Invalid"
    assert response.body["details"] == {"name": "w1", "group": widget_group, "kind": "Widget", "causes": [cause]}
    assert response.body["message"] == f'Widget.{widget_group} "w1" is invalid: {cause["field"]}: {cause["message"]}'


def test_several_violations_are_listed_together(http: Any, widget_group: str, namespace: str) -> None:
    response = http("POST", widgets(widget_group, namespace), body=body(widget_group, size=20, color="x"))
    assert sorted(c["field"] for c in response.body["details"]["causes"]) == ["spec.color", "spec.size"]
    message = response.body["message"]
    assert message.startswith(f'Widget.{widget_group} "w1" is invalid: [spec.')  # in no order one can rely on
    assert "spec.size: Invalid value: 20" in message and 'spec.color: Unsupported value: "x"' in message


def test_defaults_fill_absent_fields(http: Any, widget_group: str, namespace: str) -> None:
    created = http("POST", widgets(widget_group, namespace), body=body(widget_group)).body
    assert created["spec"]["replicas"] == 1


def test_unknown_fields_are_pruned_with_a_warning(http: Any, widget_group: str, namespace: str) -> None:
    response = http("POST", widgets(widget_group, namespace), body=body(widget_group, bogus=1))
    assert response.status == 201 and "bogus" not in response.body["spec"]
    assert response.headers.get_all("Warning") == ['299 - "unknown field \\"spec.bogus\\""']


def test_strict_validation_refuses_unknown_custom_fields(http: Any, widget_group: str, namespace: str) -> None:
    response = http("POST", widgets(widget_group, namespace), body=body(widget_group, bogus=1),
                    query={"fieldValidation": "Strict"})
    assert response.status == 400
    assert response.body["message"] == ('Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
                                        'unknown field "spec.bogus"')


def test_preserve_unknown_fields_keeps_everything_below(http: Any, widget_group: str, namespace: str) -> None:
    created = http("POST", widgets(widget_group, namespace),
                   body=body(widget_group, extra={"any": {"thing": [1, 2]}})).body
    assert created["spec"]["extra"] == {"any": {"thing": [1, 2]}}


def test_custom_generation_ignores_metadata_and_status(http: Any, widget_group: str, namespace: str) -> None:
    path = widgets(widget_group, namespace)
    http("POST", path, body=body(widget_group))
    labelled = http("PATCH", f"{path}/w1", body={"metadata": {"labels": {"a": "b"}}},
                    content_type="application/merge-patch+json").body
    assert labelled["metadata"]["generation"] == 1
    changed = http("PATCH", f"{path}/w1", body={"spec": {"size": 5}}, content_type="application/merge-patch+json")
    assert changed.body["metadata"]["generation"] == 2


def test_without_a_status_subresource_status_is_ordinary_data(devcluster: DevCluster, namespace: str) -> None:
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    create_crd(devcluster, widget_crd(group, status=False, scale=False))
    path = widgets(group, namespace)
    code, created = devcluster.request("POST", path, body={**body(group), "status": {"phase": "New"}})
    assert code == 201 and created["status"] == {"phase": "New"}
    code, changed = devcluster.request("PATCH", f"{path}/w1", body={"status": {"phase": "Old"}},
                                       content_type="application/merge-patch+json")
    assert code == 200 and changed["status"] == {"phase": "Old"} and changed["metadata"]["generation"] == 2
    devcluster.request("DELETE", f"{CRDS}/widgets.{group}")


@pytest.mark.parametrize(("change", "message"), [
    (lambda crd: crd["metadata"].update(name="wrong.example.com"), 'must be spec.names.plural+"."+spec.group'),
    (lambda crd: crd["spec"]["versions"].append({**crd["spec"]["versions"][0], "name": "v2"}),
     "must have exactly one version marked as storage version"),
])
def test_invalid_crds_are_refused(devcluster: DevCluster, change: Callable[[dict[str, Any]], None],
                                  message: str) -> None:
    crd = widget_crd(f"g{uuid.uuid4().hex[:8]}.example.com")
    change(crd)
    code, status = devcluster.request("POST", CRDS, body=crd)
    assert code == 422 and message in status["message"]


def test_a_second_served_version_is_served_from_the_same_storage(devcluster: DevCluster, namespace: str) -> None:
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    crd = widget_crd(group)
    crd["spec"]["versions"].append({**crd["spec"]["versions"][0], "name": "v1beta1", "storage": False})
    create_crd(devcluster, crd)
    wait_for(devcluster, lambda: devcluster.request("GET", f"/apis/{group}/v1beta1/namespaces/{namespace}/widgets")[0]
             == 200)
    devcluster.request("POST", widgets(group, namespace), body=body(group))
    code, old = devcluster.request("GET", f"/apis/{group}/v1beta1/namespaces/{namespace}/widgets/w1")
    assert code == 200 and old["apiVersion"] == f"{group}/v1beta1"
    code, group_doc = devcluster.request("GET", f"/apis/{group}")
    assert group_doc["preferredVersion"]["version"] == "v1"
    devcluster.request("DELETE", f"{CRDS}/widgets.{group}")


def test_deleting_a_crd_removes_its_objects_and_its_resource(devcluster: DevCluster, namespace: str,
                                                             wait_until: Callable[..., Any]) -> None:
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    create_crd(devcluster, widget_crd(group))
    devcluster.request("POST", widgets(group, namespace), body=body(group))
    code, answer = devcluster.request("DELETE", f"{CRDS}/widgets.{group}")
    assert code == 200 and "customresourcecleanup.apiextensions.k8s.io" in answer["metadata"]["finalizers"]
    wait_until(lambda: devcluster.request("GET", f"{CRDS}/widgets.{group}")[0] == 404)
    assert devcluster.request("GET", f"/apis/{group}/v1")[0] == 404
    assert devcluster.request("GET", widgets(group, namespace))[0] == 404


def test_custom_list_items_and_errors_name_the_group(custom: client.CustomObjectsApi, widget_group: str,
                                                     namespace: str) -> None:
    with pytest.raises(ApiException) as err:
        custom.get_namespaced_custom_object(widget_group, "v1", namespace, "widgets", "nope")
    status = json.loads(err.value.body)
    assert status["message"] == f'widgets.{widget_group} "nope" not found'
    assert status["details"] == {"name": "nope", "group": widget_group, "kind": "widgets"}


def test_cluster_scoped_custom_resources(devcluster: DevCluster) -> None:
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    crd = widget_crd(group)
    crd["spec"]["scope"] = "Cluster"
    create_crd(devcluster, crd)
    code, created = devcluster.request("POST", f"/apis/{group}/v1/widgets", body=body(group))
    assert code == 201 and "namespace" not in created["metadata"]
    devcluster.request("DELETE", f"{CRDS}/widgets.{group}")
