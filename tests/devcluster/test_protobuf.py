"""Kubernetes' protobuf wire format: request bodies as kubectl's generators send them, answers to clients that
take only protobuf, and the JSON form of the messages (Go's names, omitempty, int-or-string, quantities, times,
raw JSON, bytes, inlined structs and named lists)."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest

from engine.apiserver import protobuf
from engine.apiserver.protobuf.messages import catalog

from .helpers import configmap, deployment

PROTOBUF = "application/vnd.kubernetes.protobuf"
# What kubectl 1.37 sends for `kubectl create configmap c --from-literal=a=b` (Go writes every non-pointer field,
# empty or not: generateName, namespace, selfLink, uid, resourceVersion, generation, creationTimestamp).
KUBECTL_CONFIGMAP = (b'k8s\x00\n\x0f\n\x02v1\x12\tConfigMap\x12\x1b\n\x11\n\x01c\x12\x00\x1a\x00"\x00*\x002\x008\x00'
                     b'B\x00\x12\x06\n\x01a\x12\x01b\x1a\x00"\x00')

POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "creationTimestamp": "2025-01-02T03:04:05Z",
                 "deletionGracePeriodSeconds": 0,
                 "managedFields": [{"manager": "m", "operation": "Apply", "apiVersion": "v1",
                                    "time": "2025-01-02T03:04:05Z", "fieldsType": "FieldsV1",
                                    "fieldsV1": {"f:spec": {"f:containers": {'k:{"name":"c"}': {".": {}}}}}}]},
    "spec": {"automountServiceAccountToken": False,
             "volumes": [{"name": "scratch", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "cm"}}],
             "containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c", "true"],
                             "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}},
                             "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                             "readinessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 5},
                             "env": [{"name": "KEY", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}]},
}


def test_a_kubectl_body_decodes_as_go_writes_it_in_json() -> None:
    assert protobuf.decode_envelope(KUBECTL_CONFIGMAP) == {"apiVersion": "v1", "kind": "ConfigMap",
                                                           "metadata": {"name": "c"}, "data": {"a": "b"}}


@pytest.mark.parametrize("obj", [
    POD,
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "labels": {"app": "d"}},
     "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "d"}},
              "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
              "template": {"metadata": {"labels": {"app": "d"}},
                           "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}},
    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "type": "Opaque",
     "data": {"k": "c2VjcmV0", "empty": ""}, "immutable": False},
    {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r"},
     "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]},
    {"apiVersion": "v1", "kind": "APIResourceList", "groupVersion": "v1",
     "resources": [{"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
                    "verbs": ["get", "list"], "shortNames": ["po"]}]},
    {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
     "metadata": {"name": "widgets.example.com"},
     "spec": {"group": "example.com", "scope": "Namespaced",
              "names": {"plural": "widgets", "kind": "Widget"},
              "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                  "type": "object", "x-kubernetes-preserve-unknown-fields": True,
                  "properties": {"spec": {"type": "object", "additionalProperties": {"type": "string"},
                                          "properties": {"size": {"type": "integer", "default": 3},
                                                         "tags": {"type": "array",
                                                                  "items": {"type": "string"}}}}}}}}]}},
    {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
     "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15, "renewTime": "2025-01-02T03:04:05.123456Z"}},
], ids=lambda obj: obj["kind"])
def test_json_survives_the_trip_through_protobuf(obj: dict[str, Any]) -> None:
    encoded = protobuf.encode_envelope(copy.deepcopy(obj))
    assert encoded is not None and encoded.startswith(b"k8s\x00")
    assert protobuf.decode_envelope(encoded) == obj


def test_zero_values_follow_go_pointers_and_omitempty() -> None:
    descriptor = catalog().descriptor("apps/v1", "Deployment")
    assert descriptor is not None
    message = protobuf.from_json({"metadata": {"name": "d", "namespace": "", "generation": 0},
                                  "spec": {"replicas": 0, "paused": False, "minReadySeconds": 0}}, descriptor)
    assert protobuf.to_json(message) == {"metadata": {"name": "d"}, "spec": {"replicas": 0}}


def test_go_durations_are_written_and_read_as_go_does() -> None:
    assert [protobuf.go_duration(ns) for ns in (0, 1500, 90 * 10**9, 3600 * 10**9 + 10**6)] == \
        ["0s", "1.5µs", "1m30s", "1h0m0.001s"]
    assert protobuf.parse_go_duration("1h30m0.5s") == 5400_500_000_000


def test_a_protobuf_create_stores_what_the_same_json_create_stores(http: Any, namespace: str) -> None:
    sent, twin = deployment("web", 2), deployment("web", 2)
    sent["metadata"]["name"], twin["metadata"]["name"] = "from-proto", "from-json"
    created = http("POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", body=protobuf.encode_envelope(sent),
                   content_type=PROTOBUF)
    assert created.status == 201, created.body
    stored = http("POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", body=twin).body
    for obj in (created.body, stored):
        for key in ("name", "uid", "resourceVersion", "creationTimestamp"):
            obj["metadata"].pop(key)
        for entry in obj["metadata"]["managedFields"]:
            entry.pop("time")
    assert created.body == stored


def test_a_client_that_prefers_protobuf_gets_protobuf(http: Any, namespace: str) -> None:
    http("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=configmap("cm", {"k": "v"}))
    path = f"/api/v1/namespaces/{namespace}/configmaps/cm"
    for accept in (PROTOBUF, f"{PROTOBUF},application/json", f"application/json;q=0.5,{PROTOBUF}"):
        answer = http("GET", path, headers={"Accept": accept})
        assert answer.status == 200 and answer.headers["Content-Type"] == PROTOBUF, accept
        decoded = protobuf.decode_envelope(answer.raw)
        assert decoded["data"] == {"k": "v"} and decoded["metadata"]["namespace"] == namespace
    for accept in (f"application/json,{PROTOBUF}", "*/*", ""):
        answer = http("GET", path, headers={"Accept": accept} if accept else {})
        assert answer.headers["Content-Type"] == "application/json" and answer.body["data"] == {"k": "v"}, accept
    missing = http("GET", f"{path}-missing", headers={"Accept": PROTOBUF})
    assert missing.status == 404 and missing.headers["Content-Type"] == PROTOBUF
    assert protobuf.decode_envelope(missing.raw)["reason"] == "NotFound"


def test_a_protobuf_delete_options_body_is_read(http: Any, namespace: str) -> None:
    http("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=configmap("doomed"))
    options = protobuf.encode_envelope({"apiVersion": "v1", "kind": "DeleteOptions",
                                        "preconditions": {"uid": str(uuid.uuid4())}})
    refused = http("DELETE", f"/api/v1/namespaces/{namespace}/configmaps/doomed", body=options,
                   content_type=PROTOBUF)
    assert refused.status == 409 and "the UID in the precondition" in refused.body["message"]


def test_a_body_that_is_not_protobuf_is_a_bad_request(http: Any, namespace: str) -> None:
    for body in (b"{not protobuf}", b"k8s\x00\x01\x02"):
        garbage = http("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=body, content_type=PROTOBUF)
        assert garbage.status == 400 and garbage.body["reason"] == "BadRequest"


@pytest.mark.dev_only("the real server drops the connection, with no answer, on a protobuf body for a custom "
                      "resource; the dev cluster answers 415 instead")
def test_custom_resources_refuse_protobuf(http: Any, namespace: str, widget_group: str) -> None:
    refused = http("POST", f"/apis/{widget_group}/v1/namespaces/{namespace}/widgets", body=KUBECTL_CONFIGMAP,
                   content_type=PROTOBUF)
    assert refused.status == 415 and refused.body["reason"] == "UnsupportedMediaType"
