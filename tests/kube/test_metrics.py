"""Request counters: every request the Kube sends is counted once, by Kubernetes verb."""

from __future__ import annotations

from collections import Counter

import pytest

from engine.kube import Kube
from engine.kube.metrics import verb_of

from .helpers import configmap


@pytest.mark.parametrize(
    ("method", "path", "query", "content_type", "verb"),
    [
        ("GET", "/api/v1/namespaces/a/pods/x", "", None, "get"),
        ("GET", "/api/v1/namespaces/a/pods", "limit=500", None, "list"),
        ("GET", "/apis/apps/v1/deployments", "watch=true", None, "watch"),
        ("GET", "/api/v1/namespaces/a", "", None, "get"),
        ("GET", "/api/v1/namespaces", "", None, "list"),
        ("POST", "/api/v1/namespaces/a/configmaps", "", "application/json", "create"),
        ("PUT", "/apis/x.dev/v1/namespaces/a/widgets/w/status", "", "application/json", "update"),
        ("PUT", "/api/v1/namespaces/a/finalize", "", "application/json", "update"),
        ("PATCH", "/apis/apps/v1/namespaces/a/deployments/w", "", "application/apply-patch+yaml", "apply"),
        ("PATCH", "/apis/apps/v1/namespaces/a/deployments/w", "", "application/merge-patch+json", "patch"),
        ("DELETE", "/api/v1/namespaces/a/pods/x", "", "application/json", "delete"),
        ("DELETE", "/api/v1/namespaces/a/pods", "", None, "deletecollection"),
        ("GET", "/apis/apps/v1", "", None, "discovery"),
        ("GET", "/api", "", None, "discovery"),
        ("GET", "/version", "", None, "discovery"),
    ],
)
def test_verb_of_a_request(method: str, path: str, query: str, content_type: str | None, verb: str) -> None:
    assert verb_of(method, path, query, content_type) == verb


def test_each_operation_is_counted_by_its_verb(kube: Kube, namespace: str) -> None:
    kube.resource("v1", "ConfigMap")
    before = Counter(kube.requests)

    kube.apply(configmap("a", namespace))
    current = kube.get("v1", "ConfigMap", "a", namespace)
    kube.replace({**current, "data": {"x": "1"}})
    kube.patch("v1", "ConfigMap", "a", namespace, {"data": {"x": "2"}})
    kube.create(configmap("b", namespace))
    kube.list("v1", "ConfigMap", namespace)
    with kube.watch("v1", "ConfigMap", namespace=namespace, timeout=1) as changes:
        list(changes)
    kube.delete("v1", "ConfigMap", "a", namespace)

    counted = Counter(kube.requests)
    counted.subtract(before)
    assert +counted == Counter(apply=1, get=1, update=1, patch=1, create=1, list=1, watch=1, delete=1)
