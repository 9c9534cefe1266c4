"""Table answers for kubectl get, and the /openapi/v3 documents kubectl apply --server-side and explain read."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from kubernetes import client

from engine.devcluster.cluster import DevCluster

from .helpers import configmap, create_crd, deployment, wait_for, widget_crd

TABLE = ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,"
         "application/json")


def columns(table: dict[str, Any]) -> list[str]:
    return [c["name"] for c in table["columnDefinitions"]]


def test_a_configmap_list_as_table(http: Any, core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("a", {"x": "1", "y": "2"}))
    table = http("GET", f"/api/v1/namespaces/{namespace}/configmaps", headers={"Accept": TABLE},
                 query={"fieldSelector": "metadata.name=a"}).body  # not the namespace's own kube-root-ca.crt
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert columns(table) == ["Name", "Data", "Age"]
    [row] = table["rows"]
    assert row["cells"][:2] == ["a", 2] and row["cells"][2].endswith("s")
    assert row["object"]["kind"] == "PartialObjectMetadata" and row["object"]["metadata"]["name"] == "a"
    assert table["metadata"]["resourceVersion"].isdigit()


def test_a_deployment_row_as_kubectl_prints_it(http: Any, apps: client.AppsV1Api, namespace: str) -> None:
    apps.create_namespaced_deployment(namespace, deployment("web", replicas=3))
    table = http("GET", f"/apis/apps/v1/namespaces/{namespace}/deployments/web", headers={"Accept": TABLE}).body
    assert columns(table)[:5] == ["Name", "Ready", "Up-to-date", "Available", "Age"]
    assert table["rows"][0]["cells"][:4] == ["web", "0/3", 0, 0]
    priorities = {c["name"]: c["priority"] for c in table["columnDefinitions"]}
    assert priorities["Images"] == 1 and priorities["Name"] == 0


def test_a_pod_row_shows_readiness_and_phase(http: Any, core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_pod(namespace, {"metadata": {"name": "p"},
                                           "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    table = http("GET", f"/api/v1/namespaces/{namespace}/pods", headers={"Accept": TABLE}).body
    assert columns(table)[:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert table["rows"][0]["cells"][:4] == ["p", "0/1", "Pending", "0"]


def test_include_object_returns_whole_objects(http: Any, core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("a", {"x": "1"}))
    table = http("GET", f"/api/v1/namespaces/{namespace}/configmaps", headers={"Accept": TABLE},
                 query={"includeObject": "Object"}).body
    assert table["rows"][0]["object"]["data"] == {"x": "1"}


def test_custom_printer_columns(http: Any, widget_group: str, namespace: str) -> None:
    path = f"/apis/{widget_group}/v1/namespaces/{namespace}/widgets"
    http("POST", path, body={"apiVersion": f"{widget_group}/v1", "kind": "Widget", "metadata": {"name": "w1"},
                             "spec": {"size": 4}})
    table = http("GET", path, headers={"Accept": TABLE}).body
    assert columns(table) == ["Name", "Size", "Phase", "Age"]
    assert table["rows"][0]["cells"][:3] == ["w1", 4, None]


def test_a_printer_column_reads_a_label_whose_key_has_escaped_dots(
    devcluster: DevCluster, http: Any, namespace: str
) -> None:
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    crd = widget_crd(group)
    crd["spec"]["versions"][0]["additionalPrinterColumns"].insert(
        0, {"name": "Owner", "type": "string", "jsonPath": r".metadata.labels.example\.com/owner"})
    create_crd(devcluster, crd)
    path = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
    http("POST", path, body={"apiVersion": f"{group}/v1", "kind": "Widget",
                             "metadata": {"name": "w1", "labels": {"example.com/owner": "alice"}}, "spec": {"size": 1}})
    table = http("GET", path, headers={"Accept": TABLE}).body
    assert columns(table)[:2] == ["Name", "Owner"]
    assert table["rows"][0]["cells"][:2] == ["w1", "alice"]
    devcluster.request("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}")


def test_a_crd_without_columns_shows_name_and_age(devcluster: DevCluster, http: Any, namespace: str) -> None:
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    create_crd(devcluster, widget_crd(group, columns=False))
    table = http("GET", f"/apis/{group}/v1/namespaces/{namespace}/widgets", headers={"Accept": TABLE}).body
    assert columns(table) == ["Name", "Age"]
    devcluster.request("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}")


def test_the_openapi_index_lists_every_group_version(http: Any) -> None:
    paths = http("GET", "/openapi/v3").body["paths"]
    assert {"api/v1", "apis/apps/v1", "apis/batch/v1", "apis/apiextensions.k8s.io/v1"} <= set(paths)
    assert paths["apis/apps/v1"]["serverRelativeURL"].startswith("/openapi/v3/apis/apps/v1?hash=")


def test_every_patch_operation_offers_field_validation(http: Any) -> None:
    doc = http("GET", "/openapi/v3/apis/apps/v1").body
    patches = [item["patch"] for item in doc["paths"].values() if "patch" in item]
    assert patches
    for op in patches:
        assert {"name": "fieldValidation", "in": "query"}.items() <= next(
            p for p in op["parameters"] if p["name"] == "fieldValidation").items()
        assert set(op["x-kubernetes-group-version-kind"]) == {"group", "kind", "version"}


def test_component_schemas_carry_their_kind_and_refs(http: Any) -> None:
    schemas = http("GET", "/openapi/v3/apis/apps/v1").body["components"]["schemas"]
    deploy = schemas["io.k8s.api.apps.v1.Deployment"]
    assert deploy["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    assert deploy["properties"]["spec"]["allOf"] == [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}]
    assert "io.k8s.api.core.v1.PodSpec" in schemas
    assert schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["replicas"]["type"] == "integer"


def test_a_crd_gets_a_document_and_the_index_changes(devcluster: DevCluster, http: Any) -> None:
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    before = http("GET", "/openapi/v3").body["paths"]
    create_crd(devcluster, widget_crd(group))
    after = wait_for(devcluster, lambda: (paths := http("GET", "/openapi/v3").body["paths"]) and
                     f"apis/{group}/v1" in paths and paths)
    assert f"apis/{group}/v1" not in before and f"apis/{group}/v1" in after
    doc = http("GET", f"/openapi/v3/apis/{group}/v1").body
    reverse = ".".join(reversed(group.split(".")))
    widget = doc["components"]["schemas"][f"{reverse}.v1.Widget"]
    assert widget["x-kubernetes-group-version-kind"] == [{"group": group, "kind": "Widget", "version": "v1"}]
    assert widget["properties"]["spec"]["properties"]["size"]["type"] == "integer"
    devcluster.request("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}")


def test_openapi_v2_is_served(http: Any) -> None:
    response = http("GET", "/openapi/v2", headers={"Accept": "application/json"})
    assert response.status == 200 and response.headers["Content-Type"] == "application/json"
    doc = response.body
    assert (doc["swagger"], doc["info"]) == ("2.0", {"title": "Kubernetes", "version": "1.37"})
    assert doc["definitions"]["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "kind": "Deployment", "version": "v1"}]
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "kind": "Deployment", "version": "v1"}
    params = [doc["parameters"][p["$ref"].rsplit("/", 1)[1]] if "$ref" in p else p for p in patch["parameters"]]
    assert {"name": "fieldValidation", "in": "query"}.items() <= next(
        p for p in params if p["name"] == "fieldValidation").items()
    body = next(p for p in params if p["in"] == "body")
    assert body["schema"] == {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}


@pytest.mark.parametrize("accept", ["application/yaml", "application/vnd.kubernetes.protobuf", "text/plain"])
def test_openapi_v2_refuses_other_types_with_an_empty_406(http: Any, accept: str) -> None:
    response = http("GET", "/openapi/v2", headers={"Accept": accept})
    assert (response.status, response.raw) == (406, b"")
