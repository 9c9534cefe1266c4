"""Go's omitempty: the empty maps, lists and zero scalars the real server's Go types drop from built-in objects
(and from every object's metadata), the `null` of an empty list without the tag, and custom resources' own
fields kept as written."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from engine.devcluster.backends import Cluster

from .helpers import CRDS, create_crd, widget_crd

EMPTY_META = {"labels": {}, "annotations": {}, "finalizers": [], "ownerReferences": []}


def created(cluster: Cluster, path: str, obj: dict[str, Any]) -> dict[str, Any]:
    code, body = cluster.request("POST", path, body=obj)
    assert code == 201, body
    return body


def test_empty_metadata_and_data_are_not_stored(devcluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    body = created(devcluster, path, {"apiVersion": "v1", "kind": "ConfigMap", "data": {}, "binaryData": {},
                                      "metadata": {"name": "c", **EMPTY_META}})
    for read in (body, devcluster.request("GET", f"{path}/c")[1]):
        assert not set(EMPTY_META) & set(read["metadata"]) and "data" not in read and "binaryData" not in read
        assert "managedFields" not in read["metadata"]  # nothing was set, so nobody manages anything


def test_a_pod_keeps_none_of_its_empty_lists_and_maps(devcluster: Cluster, namespace: str) -> None:
    container = {"name": "m", "image": "busybox:1.36", "env": [], "args": [], "command": [], "ports": [],
                 "envFrom": [], "resources": {"limits": {}, "requests": {}}}
    spec = {"nodeSelector": {}, "imagePullSecrets": [], "initContainers": [], "hostAliases": [], "readinessGates": [],
            "securityContext": {"supplementalGroups": []}, "hostNetwork": False, "hostname": "",
            "containers": [container]}
    pod = created(devcluster, f"/api/v1/namespaces/{namespace}/pods",
                  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {}}, "spec": spec})
    assert "labels" not in pod["metadata"]
    assert not {"nodeSelector", "imagePullSecrets", "initContainers", "hostAliases", "readinessGates", "hostNetwork",
                "hostname"} & set(pod["spec"])
    assert pod["spec"]["securityContext"] == {}  # a struct stays, empty
    stored = pod["spec"]["containers"][0]
    assert not {"env", "args", "command", "ports", "envFrom"} & set(stored) and stored["resources"] == {}


def test_an_empty_list_without_omitempty_reads_back_null(devcluster: Cluster) -> None:
    name = f"t-{uuid.uuid4().hex[:8]}"
    path = "/apis/rbac.authorization.k8s.io/v1/clusterroles"
    role = created(devcluster, path, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                      "metadata": {"name": name}, "rules": []})
    try:
        assert "rules" in role and role["rules"] is None
    finally:
        devcluster.request("DELETE", f"{path}/{name}")


def test_an_update_adding_an_empty_map_changes_nothing(devcluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    body = created(devcluster, path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                                      "data": {"k": "v"}})
    replaced = {**body, "metadata": {**body["metadata"], "annotations": {}}, "binaryData": {}}
    code, after = devcluster.request("PUT", f"{path}/c", body=replaced)
    assert code == 200 and after["metadata"]["resourceVersion"] == body["metadata"]["resourceVersion"]
    assert after["metadata"]["managedFields"] == body["metadata"]["managedFields"]


def test_removing_the_last_label_removes_the_labels(devcluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created(devcluster, path, {"apiVersion": "v1", "kind": "ConfigMap",
                               "metadata": {"name": "c", "labels": {"a": "b"}}})
    code, patched = devcluster.request("PATCH", f"{path}/c", body={"metadata": {"labels": {"a": None}}},
                                       content_type="application/merge-patch+json")
    assert code == 200 and "labels" not in patched["metadata"]


@pytest.fixture
def thing_group(devcluster: Cluster) -> Iterator[str]:
    group = f"o{uuid.uuid4().hex[:8]}.example.com"
    crd = widget_crd(group)
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"]["properties"]["extra"].update({"properties": {}, "required": []})
    create_crd(devcluster, crd)
    yield group
    devcluster.request("DELETE", f"{CRDS}/widgets.{group}")


def test_a_crd_schema_loses_its_empty_properties(devcluster: Cluster, thing_group: str) -> None:
    crd = devcluster.request("GET", f"{CRDS}/widgets.{thing_group}")[1]
    extra = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["extra"]
    assert extra == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def test_a_custom_resource_keeps_its_own_empty_fields_but_not_empty_metadata(devcluster: Cluster, namespace: str,
                                                                               thing_group: str) -> None:
    spec = {"size": 3, "tags": [], "selector": "", "extra": {"m": {}, "l": [], "z": 0}}
    body = created(devcluster, f"/apis/{thing_group}/v1/namespaces/{namespace}/widgets",
                   {"apiVersion": f"{thing_group}/v1", "kind": "Widget", "metadata": {"name": "w", **EMPTY_META},
                    "spec": spec})
    assert not set(EMPTY_META) & set(body["metadata"])
    assert body["spec"] == {**spec, "replicas": 1}


@pytest.mark.parametrize(("plural", "status"), [
    ("replicasets", {"replicas": 0}), ("statefulsets", {"replicas": 0, "availableReplicas": 0}),
    ("deployments", {})])
def test_a_new_workload_has_the_status_go_writes(devcluster: Cluster, namespace: str, plural: str,
                                                 status: dict[str, Any]) -> None:
    labels = {"app": "w"}
    spec: dict[str, Any] = {"selector": {"matchLabels": labels}, "template": {
        "metadata": {"labels": labels}, "spec": {"containers": [{"name": "m", "image": "busybox:1.36"}]}}}
    if plural == "statefulsets":
        spec["serviceName"] = "w"
    kind = {"replicasets": "ReplicaSet", "statefulsets": "StatefulSet", "deployments": "Deployment"}[plural]
    body = created(devcluster, f"/apis/apps/v1/namespaces/{namespace}/{plural}",
                   {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "w"}, "spec": spec})
    assert body["status"] == status
    assert all("f:status" not in entry["fieldsV1"] for entry in body["metadata"]["managedFields"])
