"""Property: whatever JSON a client puts anywhere in a body, create/update/patch answer a Status or an object,
never a 500 (except where the real server also answers 500: a typed-apply failure, a create with a
resourceVersion) and never a dropped request.

Dev backend only: a property of the dev cluster's own handler stack, checked with thousands of generated bodies;
its expectations were taken from the real server.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.devcluster.cluster import DevCluster

from .helpers import configmap, deployment, widget_crd

pytestmark = pytest.mark.dev_only("see the module docstring")

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, width=16),
                    st.text(max_size=4))
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=2),
                                                       st.dictionaries(st.text(max_size=4), inner, max_size=2)),
                      max_leaves=4)
PATHS = st.sampled_from([
    ("metadata",), ("metadata", "labels"), ("metadata", "labels", "app"), ("metadata", "annotations"),
    ("metadata", "finalizers"), ("metadata", "ownerReferences"), ("metadata", "name"), ("spec",),
    ("spec", "replicas"), ("spec", "selector"), ("spec", "template"), ("spec", "template", "spec", "containers"),
    ("data",), ("status",), ("kind",), ("apiVersion",), ("spec", "size"), ("spec", "ports"),
    ("spec", "template", "metadata", "labels"), ("spec", "strategy"), ("metadata", "generateName"),
    ("metadata", "resourceVersion"), ("metadata", "uid"), ("metadata", "managedFields"), ("status", "conditions"),
])


def put(body: dict[str, Any], path: tuple[str, ...], value: Any) -> dict[str, Any]:
    target = body
    for key in path[:-1]:
        child = target.get(key)
        if not isinstance(child, dict):
            child = target[key] = {}
        target = child
    target[path[-1]] = value
    return body


def documented(code: int, answer: dict[str, Any]) -> bool:
    message = str(answer.get("message", ""))
    return code != 500 or message.startswith("failed to create typed patch object") or \
        message == "resourceVersion should not be set on objects to be created"


def test_mutated_bodies_never_fail_the_server(devcluster: DevCluster) -> None:
    ns = f"fuzz-{uuid.uuid4().hex[:8]}"
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    devcluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": ns}})
    devcluster.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=widget_crd(group))
    targets = [
        (f"/api/v1/namespaces/{ns}/configmaps", lambda: configmap("x", {"a": "b"})),
        (f"/apis/apps/v1/namespaces/{ns}/deployments", lambda: deployment("x")),
        (f"/apis/{group}/v1/namespaces/{ns}/widgets",
         lambda: {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "x"}, "spec": {"size": 1}}),
    ]

    verbs = st.sampled_from(["create", "apply", "merge", "strategic", "put"])

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.sampled_from(range(len(targets))), PATHS, VALUES, verbs)
    def check(index: int, path: tuple[str, ...], value: Any, verb: str) -> None:
        collection, make = targets[index]
        body = put(make(), path, value)
        if verb == "create":
            code, answer = devcluster.request("POST", collection, body=body)
        elif verb == "apply":
            code, answer = devcluster.request("PATCH", f"{collection}/x", body=body, query={"fieldManager": "f"},
                                              content_type="application/apply-patch+yaml")
        elif verb == "put":
            devcluster.request("POST", collection, body=make())
            code, answer = devcluster.request("PUT", f"{collection}/x", body=body)
        else:
            devcluster.request("POST", collection, body=make())
            kind = "merge" if verb == "merge" or index == 2 else "strategic-merge"
            code, answer = devcluster.request("PATCH", f"{collection}/x", body=put({}, path, value),
                                              content_type=f"application/{kind}-patch+json")
        assert documented(code, answer), (code, answer)
        devcluster.request("DELETE", f"{collection}/x")

    check()
    devcluster.request("DELETE", f"/api/v1/namespaces/{ns}")
    devcluster.request("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}")
