"""CRUD of built-in objects: metadata conventions, resourceVersion, optimistic concurrency, dry-run, selectors,
pagination, generation rules, field validation and no-op writes."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from engine.devcluster.cluster import DevCluster

from .helpers import configmap, deployment

RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def status_of(err: ApiException) -> dict[str, Any]:
    return json.loads(err.body)


def test_create_sets_uid_timestamp_and_a_resource_version(http: Any, namespace: str) -> None:
    created = http("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=configmap("a", {"k": "v"})).body
    meta = created["metadata"]
    assert meta["uid"] and meta["resourceVersion"].isdigit()
    assert RFC3339.match(meta["creationTimestamp"])
    assert "generation" not in meta


def test_every_write_takes_a_new_global_resource_version(core: client.CoreV1Api, namespace: str) -> None:
    first = core.create_namespaced_config_map(namespace, configmap("a"))
    second = core.create_namespaced_secret(namespace, {"metadata": {"name": "s"}, "stringData": {"x": "y"}})
    updated = core.patch_namespaced_config_map("a", namespace, {"data": {"k": "v"}})
    versions = [int(o.metadata.resource_version) for o in (first, second, updated)]
    assert versions == sorted(versions) and len(set(versions)) == 3


def test_list_resource_version_is_the_current_revision(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("a"))
    later = core.create_namespaced_secret(namespace, {"metadata": {"name": "s"}})
    listed = core.list_namespaced_config_map(namespace)
    assert int(listed.metadata.resource_version) >= int(later.metadata.resource_version)


def test_built_in_list_items_carry_no_kind(http: Any, namespace: str, core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map(namespace, configmap("a"))
    body = http("GET", f"/api/v1/namespaces/{namespace}/configmaps").body
    assert body["kind"] == "ConfigMapList" and body["apiVersion"] == "v1"
    assert "kind" not in body["items"][0] and "apiVersion" not in body["items"][0]


def test_a_taken_name_is_already_exists(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("a"))
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map(namespace, configmap("a"))
    assert err.value.status == 409
    assert status_of(err.value) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'configmaps "a" already exists', "reason": "AlreadyExists",
        "details": {"name": "a", "kind": "configmaps"}, "code": 409}


def test_generate_name_appends_five_characters(core: client.CoreV1Api, namespace: str) -> None:
    created = core.create_namespaced_config_map(namespace, {"metadata": {"generateName": "job-"}})
    assert re.fullmatch(r"job-[bcdfghjklmnpqrstvwxz2456789]{5}", created.metadata.name)


def test_a_missing_name_is_invalid(core: client.CoreV1Api, namespace: str) -> None:
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map(namespace, {"metadata": {}})
    body = status_of(err.value)
    assert err.value.status == 422 and body["reason"] == "Invalid"
    assert body["details"]["causes"] == [{"reason": "FieldValueRequired", "field": "metadata.name",
                                          "message": "Required value: name or generateName is required"}]


def test_a_name_that_is_not_a_dns_subdomain_is_invalid(core: client.CoreV1Api, namespace: str) -> None:
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map(namespace, configmap("Bad_Name"))
    body = status_of(err.value)
    assert err.value.status == 422
    assert body["message"].startswith('ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": '
                                      "a lowercase RFC 1123 subdomain")


def test_a_service_name_is_a_dns_1123_label(core: client.CoreV1Api, namespace: str) -> None:
    """Since RelaxedServiceNameValidation a name may start with a digit, but it is still an RFC 1123 label."""
    core.create_namespaced_service(namespace, {"metadata": {"name": "1svc"}, "spec": {"ports": [{"port": 80}]}})
    with pytest.raises(ApiException) as err:
        core.create_namespaced_service(namespace, {"metadata": {"name": "-svc"}, "spec": {"ports": [{"port": 80}]}})
    assert err.value.status == 422 and "RFC 1123 label" in status_of(err.value)["message"]


def test_creating_into_a_missing_namespace_is_not_found(core: client.CoreV1Api) -> None:
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map("no-such-namespace", configmap("a"))
    assert err.value.status == 404
    assert status_of(err.value)["message"] == 'namespaces "no-such-namespace" not found'


def test_a_body_namespace_other_than_the_url_is_a_bad_request(core: client.CoreV1Api, namespace: str) -> None:
    body = configmap("a")
    body["metadata"]["namespace"] = "elsewhere"
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map(namespace, body)
    assert err.value.status == 400
    assert status_of(err.value)["message"] == ("the namespace of the provided object does not match the namespace "
                                              "sent on the request")


def test_creating_with_a_resource_version_is_an_internal_error(core: client.CoreV1Api, namespace: str) -> None:
    body = configmap("a")
    body["metadata"]["resourceVersion"] = "5"
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map(namespace, body)
    assert err.value.status == 500
    assert status_of(err.value)["message"] == "resourceVersion should not be set on objects to be created"


def test_replace_with_a_stale_resource_version_conflicts(core: client.CoreV1Api, namespace: str) -> None:
    created = core.create_namespaced_config_map(namespace, configmap("a"))
    core.patch_namespaced_config_map("a", namespace, {"data": {"x": "1"}})
    created.data = {"x": "2"}
    with pytest.raises(ApiException) as err:
        core.replace_namespaced_config_map("a", namespace, created)
    assert err.value.status == 409
    assert status_of(err.value)["message"] == (
        'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes '
        "to the latest version and try again")


def test_replace_without_a_resource_version_is_unconditional_for_built_ins(core: client.CoreV1Api,
                                                                          namespace: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("a"))
    replaced = core.replace_namespaced_config_map("a", namespace, configmap("a", {"x": "3"}))
    assert replaced.data == {"x": "3"}


def test_replace_with_another_name_is_a_bad_request(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("a"))
    with pytest.raises(ApiException) as err:
        core.replace_namespaced_config_map("a", namespace, configmap("b"))
    assert err.value.status == 400
    assert status_of(err.value)["message"] == "the name of the object (b) does not match the name on the URL (a)"


def test_replace_keeps_uid_and_creation_time(core: client.CoreV1Api, namespace: str) -> None:
    created = core.create_namespaced_config_map(namespace, configmap("a"))
    replaced = core.replace_namespaced_config_map("a", namespace, configmap("a", {"x": "1"}))
    assert replaced.metadata.uid == created.metadata.uid
    assert replaced.metadata.creation_timestamp == created.metadata.creation_timestamp


def test_dry_run_create_returns_the_object_without_storing_it(core: client.CoreV1Api, namespace: str) -> None:
    created = core.create_namespaced_config_map(namespace, configmap("a"), dry_run="All")
    assert created.metadata.uid and not created.metadata.resource_version
    with pytest.raises(ApiException) as err:
        core.read_namespaced_config_map("a", namespace)
    assert err.value.status == 404


def test_dry_run_update_keeps_the_stored_object(core: client.CoreV1Api, namespace: str) -> None:
    created = core.create_namespaced_config_map(namespace, configmap("a", {"x": "1"}))
    answer = core.patch_namespaced_config_map("a", namespace, {"data": {"x": "2"}}, dry_run="All")
    assert answer.data == {"x": "2"} and answer.metadata.resource_version == created.metadata.resource_version
    assert core.read_namespaced_config_map("a", namespace).data == {"x": "1"}


def test_dry_run_delete_keeps_the_object(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("a"))
    core.delete_namespaced_config_map("a", namespace, dry_run="All")
    assert core.read_namespaced_config_map("a", namespace).metadata.name == "a"


def test_a_no_op_update_does_not_write(core: client.CoreV1Api, namespace: str) -> None:
    created = core.create_namespaced_config_map(namespace, configmap("a", {"x": "1"}))
    same = core.patch_namespaced_config_map("a", namespace, {"data": {"x": "1"}})
    assert same.metadata.resource_version == created.metadata.resource_version


@pytest.mark.parametrize(("selector", "expected"), [
    ("app=web", ["a", "b"]),
    ("app==web,tier=front", ["a"]),
    ("app!=web", ["c", "d"]),
    ("tier in (front,back)", ["a", "b"]),
    ("tier notin (front)", ["b", "c", "d"]),
    ("tier", ["a", "b"]),
    ("!tier", ["c", "d"]),
])
def test_label_selectors(core: client.CoreV1Api, namespace: str, selector: str, expected: list[str]) -> None:
    # every object carries `case`, so what the cluster adds to a namespace (kube-root-ca.crt) stays out
    for name, labels in (("a", {"app": "web", "tier": "front"}), ("b", {"app": "web", "tier": "back"}),
                         ("c", {"app": "db"}), ("d", {})):
        core.create_namespaced_config_map(namespace, configmap(name, labels={"case": "selectors", **labels}))
    found = core.list_namespaced_config_map(namespace, label_selector=f"case=selectors,{selector}").items
    assert [o.metadata.name for o in found] == expected


def test_a_malformed_label_selector_is_a_bad_request(core: client.CoreV1Api, namespace: str) -> None:
    with pytest.raises(ApiException) as err:
        core.list_namespaced_config_map(namespace, label_selector="a in (b")
    assert err.value.status == 400


def test_field_selectors_on_name_and_pod_phase(core: client.CoreV1Api, namespace: str) -> None:
    for name in ("a", "b"):
        core.create_namespaced_pod(namespace, {"metadata": {"name": name},
                                               "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    assert [p.metadata.name for p in core.list_namespaced_pod(namespace, field_selector="metadata.name=b").items] \
        == ["b"]
    assert len(core.list_namespaced_pod(namespace, field_selector="status.phase=Pending").items) == 2
    assert core.list_namespaced_pod(namespace, field_selector="status.phase!=Pending").items == []


def test_an_unsupported_field_label_is_a_bad_request(core: client.CoreV1Api, namespace: str) -> None:
    with pytest.raises(ApiException) as err:
        core.list_namespaced_config_map(namespace, field_selector="data.x=1")
    assert err.value.status == 400
    assert status_of(err.value)["message"] == \
        '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"'
    with pytest.raises(ApiException) as err:
        core.list_namespaced_pod(namespace, field_selector="data.x=1")
    assert err.value.status == 400 and status_of(err.value)["message"] == "field label not supported: data.x"


def test_limit_and_continue_page_through_a_list(core: client.CoreV1Api, namespace: str) -> None:
    # Secrets: a new namespace holds none of its own (a ConfigMap list would count kube-root-ca.crt), and a
    # selector would make the server leave out remainingItemCount
    for i in range(5):
        core.create_namespaced_secret(namespace, {"metadata": {"name": f"c{i}"}})
    first = core.list_namespaced_secret(namespace, limit=2)
    assert [o.metadata.name for o in first.items] == ["c0", "c1"]
    assert first.metadata.remaining_item_count == 3
    names = [o.metadata.name for o in first.items]
    token = first.metadata._continue
    while token:
        page = core.list_namespaced_secret(namespace, limit=2, _continue=token)
        names += [o.metadata.name for o in page.items]
        token = page.metadata._continue
    assert names == [f"c{i}" for i in range(5)]


def test_delete_collection_removes_what_the_selector_matches(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("a", labels={"x": "1"}))
    core.create_namespaced_config_map(namespace, configmap("b", labels={"x": "2"}))
    core.delete_collection_namespaced_config_map(namespace, label_selector="x=1")
    assert [o.metadata.name for o in core.list_namespaced_config_map(namespace, label_selector="x").items] == ["b"]


def test_deployment_generation_counts_spec_changes_only(apps: client.AppsV1Api, namespace: str) -> None:
    created = apps.create_namespaced_deployment(namespace, deployment("web"))
    assert created.metadata.generation == 1
    labelled = apps.patch_namespaced_deployment("web", namespace, {"metadata": {"labels": {"a": "b"}}})
    assert labelled.metadata.generation == 1
    scaled = apps.patch_namespaced_deployment("web", namespace, {"spec": {"replicas": 3}})
    assert scaled.metadata.generation == 2


def test_configmaps_have_no_generation(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("a"))
    assert core.patch_namespaced_config_map("a", namespace, {"data": {"k": "v"}}).metadata.generation is None


def test_strict_field_validation_rejects_unknown_fields(http: Any, namespace: str) -> None:
    body = {**configmap("a"), "spec": {"x": 1}}
    response = http("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=body,
                    query={"fieldValidation": "Strict"})
    assert response.status == 400
    assert response.body["message"] == ('ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding '
                                        'error: unknown field "spec"')


def test_warn_field_validation_drops_unknown_fields_with_a_warning(http: Any, namespace: str) -> None:
    body = configmap("a")
    body["metadata"]["bogus"] = True
    response = http("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=body)
    assert response.status == 201
    assert response.headers.get_all("Warning") == ['299 - "unknown field \\"metadata.bogus\\""']
    assert "bogus" not in response.body["metadata"]


def test_a_wrongly_typed_built_in_field_is_a_bad_request(http: Any, namespace: str) -> None:
    body = deployment("web")
    body["spec"]["replicas"] = "three"
    response = http("POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", body=body)
    assert response.status == 400
    assert response.body["message"].startswith('Deployment in version "v1" cannot be handled as a Deployment: json: '
                                               "cannot unmarshal string into Go struct field DeploymentSpec.spec."
                                               "replicas of type int32")


def test_a_put_of_the_stored_object_with_true_for_its_replicas_is_a_bad_request(http: Any, namespace: str) -> None:
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    body = deployment("web")
    body["spec"]["replicas"] = 1
    stored = http("POST", path, body=body).body
    stored["spec"]["replicas"] = True  # equal to the stored 1 in Python, but a bool: the type check must see it
    response = http("PUT", f"{path}/web", body=stored)
    assert response.status == 400
    assert "cannot unmarshal bool into Go struct field DeploymentSpec.spec.replicas" in response.body["message"]


def test_deployments_get_the_server_defaults(apps: client.AppsV1Api, namespace: str) -> None:
    created = apps.create_namespaced_deployment(namespace, deployment("web"))
    raw = apps.api_client.sanitize_for_serialization(created)
    assert raw["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%",
                                                                                 "maxSurge": "25%"}}
    assert raw["spec"]["revisionHistoryLimit"] == 10 and raw["spec"]["progressDeadlineSeconds"] == 600
    container = raw["spec"]["template"]["spec"]["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["terminationMessagePath"] == "/dev/termination-log"


def test_a_deployment_whose_selector_misses_its_labels_is_invalid(apps: client.AppsV1Api, namespace: str) -> None:
    body = deployment("web")
    body["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    with pytest.raises(ApiException) as err:
        apps.create_namespaced_deployment(namespace, body)
    causes = status_of(err.value)["details"]["causes"]
    assert causes[0]["field"] == "spec.template.metadata.labels"


def test_services_get_a_cluster_ip_and_port_defaults(core: client.CoreV1Api, namespace: str) -> None:
    created = core.create_namespaced_service(namespace, {"metadata": {"name": "web"},
                                                         "spec": {"selector": {"app": "web"},
                                                                  "ports": [{"port": 80}]}})
    assert re.fullmatch(r"10\.96\.\d+\.\d+", created.spec.cluster_ip)
    port = created.spec.ports[0]
    assert (port.protocol, port.target_port) == ("TCP", 80)
    replaced = core.replace_namespaced_service("web", namespace, {"metadata": {"name": "web"},
                                                                  "spec": {"ports": [{"port": 81}]}})
    assert replaced.spec.cluster_ip == created.spec.cluster_ip


@pytest.mark.dev_only("DevCluster.request runs in the dev server's own process; on the real backend it is HTTP")
def test_in_process_requests_share_the_store_with_http(devcluster: DevCluster, core: client.CoreV1Api,
                                                      namespace: str) -> None:
    code, body = devcluster.request("POST", f"/api/v1/namespaces/{namespace}/configmaps",
                                    body=configmap("a", {"k": "v"}))
    assert code == 201 and body["metadata"]["managedFields"][0]["manager"] == "devcluster"
    assert core.read_namespaced_config_map("a", namespace).metadata.uid == body["metadata"]["uid"]


def test_escaped_names_in_paths_are_decoded(http: Any) -> None:
    name = f"system:test-{uuid.uuid4().hex[:6]}"
    created = http("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                   body={"metadata": {"name": name}, "rules": []})
    assert created.status == 201
    escaped = name.replace(":", "%3A")
    assert http("GET", f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{escaped}").body["metadata"]["name"] == name
    assert http("DELETE", f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{escaped}").status == 200


def test_secret_string_data_is_stored_base64_encoded_in_data(core: client.CoreV1Api, namespace: str,
                                                             devcluster: DevCluster) -> None:
    core.create_namespaced_secret(namespace, {"metadata": {"name": "s"}, "data": {"a": "eA=="},
                                              "stringData": {"b": "hello"}})
    stored = core.read_namespaced_secret("s", namespace)
    assert stored.data == {"a": "eA==", "b": "aGVsbG8="} and stored.string_data is None
    code, applied = devcluster.request(
        "PATCH", f"/api/v1/namespaces/{namespace}/secrets/s", query={"fieldManager": "me"},
        content_type="application/apply-patch+yaml",
        body={"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"b": "bye"}})
    assert code == 200, applied
    assert applied["data"]["b"] == "Ynll" and "stringData" not in applied
    core.patch_namespaced_secret("s", namespace, {"stringData": {"c": "3"}})
    assert core.read_namespaced_secret("s", namespace).data["c"] == "Mw=="
