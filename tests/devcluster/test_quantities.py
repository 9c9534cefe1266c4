"""Quantities: built-in kinds store them in the server's canonical form (resource.Quantity), ResourceLists rounded
up to the milliunit, malformed ones refused at decoding; custom resources keep what they were sent."""

from __future__ import annotations

from typing import Any

import pytest

from engine.devcluster.backends import Cluster

from .helpers import create_crd

PATTERN = "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def pod(name: str, resources: dict[str, Any], volumes: list[Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox:1.36", "resources": resources}],
                     "volumes": volumes or []}}


@pytest.mark.parametrize(("sent", "stored"), [
    ("1000m", "1"), ("1024Mi", "1Gi"), ("0.5", "500m"), ("1.5", "1500m"), ("1000", "1k"), ("1000k", "1M"),
    ("100m", "100m"), ("1e3", "1e3"), ("12e6", "12e6"), ("1.5Gi", "1536Mi"), ("0.5Gi", "512Mi"), ("3.5Ki", "3584"),
    ("8Gi", "8Gi"), ("1536Mi", "1536Mi"), ("2048", "2048"), ("1.0", "1"), (0.25, "250m"), (2, "2"),
    ("1.5m", "2m"), ("0.1m", "1m"), ("1n", "1m"), ("1.23456789e3", "1234568e-3"),
])
def test_resource_lists_are_canonical_and_rounded_to_milli(devcluster: Cluster, namespace: str, sent: Any,
                                                           stored: str) -> None:
    code, created = devcluster.request("POST", f"/api/v1/namespaces/{namespace}/pods",
                                       body=pod("p", {"requests": {"cpu": sent}, "limits": {"memory": sent}}))
    assert code == 201, created
    resources = created["spec"]["containers"][0]["resources"]
    assert resources == {"requests": {"cpu": stored, "memory": stored}, "limits": {"memory": stored}}
    _, read = devcluster.request("GET", f"/api/v1/namespaces/{namespace}/pods/p")
    assert read["spec"]["containers"][0]["resources"] == resources


def test_a_pod_requests_what_it_limits_but_a_template_does_not(devcluster: Cluster, namespace: str) -> None:
    limits = {"limits": {"cpu": "500m", "memory": "1024Mi"}, "requests": {"cpu": "250m"}}
    code, created = devcluster.request("POST", f"/api/v1/namespaces/{namespace}/pods", body=pod("p", limits))
    assert code == 201, created
    assert created["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "500m", "memory": "1Gi"},
                                                             "requests": {"cpu": "250m", "memory": "1Gi"}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"selector": {"matchLabels": {"app": "d"}},
                           "template": {"metadata": {"labels": {"app": "d"}},
                                        "spec": pod("p", {"limits": {"cpu": "1"}})["spec"]}}}
    code, created = devcluster.request("POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", body=deployment)
    assert code == 201, created
    assert created["spec"]["template"]["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "1"}}


def test_a_single_quantity_field_is_canonical_but_not_rounded(devcluster: Cluster, namespace: str) -> None:
    volumes = [{"name": "scratch", "emptyDir": {"sizeLimit": "1.5m"}},
               {"name": "big", "emptyDir": {"sizeLimit": "2048Mi"}}]
    code, created = devcluster.request("POST", f"/api/v1/namespaces/{namespace}/pods", body=pod("p", {}, volumes))
    assert code == 201, created
    sizes = {v["name"]: v["emptyDir"]["sizeLimit"] for v in created["spec"]["volumes"] if "emptyDir" in v}
    assert sizes == {"scratch": "1500u", "big": "2Gi"}


def test_workload_templates_quotas_limit_ranges_and_claims_are_canonical(devcluster: Cluster,
                                                                       namespace: str) -> None:
    base = f"/api/v1/namespaces/{namespace}"
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"selector": {"matchLabels": {"app": "d"}},
                           "template": {"metadata": {"labels": {"app": "d"}},
                                        "spec": {"containers": [{"name": "c", "image": "busybox:1.36",
                                                                 "resources": {"limits": {"cpu": "2000m"}}}]}}}}
    code, created = devcluster.request("POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", body=deployment)
    assert code == 201, created
    assert created["spec"]["template"]["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "2"}}
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
             "spec": {"hard": {"requests.memory": "2048Mi", "pods": "10"}}}
    code, created = devcluster.request("POST", f"{base}/resourcequotas", body=quota)
    assert code == 201, created
    assert created["spec"]["hard"] == {"requests.memory": "2Gi", "pods": "10"}
    limits = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "l"},
              "spec": {"limits": [{"type": "Container", "max": {"cpu": "0.5"}, "default": {"memory": "1024Ki"}}]}}
    code, created = devcluster.request("POST", f"{base}/limitranges", body=limits)
    assert code == 201, created
    assert created["spec"]["limits"] == [{"type": "Container", "max": {"cpu": "500m"},
                                          "default": {"cpu": "500m", "memory": "1Mi"},
                                          "defaultRequest": {"cpu": "500m", "memory": "1Mi"}}]
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1000Mi"}}}}
    code, created = devcluster.request("POST", f"{base}/persistentvolumeclaims", body=claim)
    assert code == 201, created
    assert created["spec"]["resources"]["requests"]["storage"] == "1000Mi"


def test_patches_and_applies_are_canonical_too(devcluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/resourcequotas/q"
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
             "spec": {"hard": {"cpu": "4000m"}}}
    code, applied = devcluster.request("PATCH", path, query={"fieldManager": "me"}, body=quota,
                                       content_type="application/apply-patch+yaml")
    assert code == 201, applied
    assert applied["spec"]["hard"] == {"cpu": "4"}
    code, patched = devcluster.request("PATCH", path, body={"spec": {"hard": {"memory": "0.5Gi"}}},
                                       content_type="application/merge-patch+json")
    assert code == 200, patched
    assert patched["spec"]["hard"] == {"cpu": "4", "memory": "512Mi"}


@pytest.mark.parametrize(("sent", "error"), [
    ("abc", f"quantities must match the regular expression {PATTERN}"),
    ("1Gb", f"quantities must match the regular expression {PATTERN}"),
    ("1KiB", f"quantities must match the regular expression {PATTERN}"),
    ("", f"quantities must match the regular expression {PATTERN}"),
    ("1mi", "unable to parse quantity's suffix"),
    ("1ee3", "unable to parse quantity's suffix"),
])
def test_a_malformed_quantity_is_refused_at_decoding(devcluster: Cluster, namespace: str, sent: str,
                                                     error: str) -> None:
    code, answer = devcluster.request("POST", f"/api/v1/namespaces/{namespace}/pods",
                                      body=pod("p", {"requests": {"cpu": sent}}))
    assert (code, answer["reason"]) == (400, "BadRequest")
    assert answer["message"] == f'Pod in version "v1" cannot be handled as a Pod: {error}'


def test_custom_resources_keep_quantities_as_sent(devcluster: Cluster, namespace: str) -> None:
    group = "quantities.example.com"
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"gadgets.{group}"},
           "spec": {"group": group, "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"spec": {"type": "object", "properties": {
                            "memory": {"x-kubernetes-int-or-string": True,
                                       "anyOf": [{"type": "integer"}, {"type": "string"}]}}}}}}}]}}
    create_crd(devcluster, crd)
    try:
        code, created = devcluster.request("POST", f"/apis/{group}/v1/namespaces/{namespace}/gadgets",
                                           body={"apiVersion": f"{group}/v1", "kind": "Gadget",
                                                 "metadata": {"name": "g"}, "spec": {"memory": "1024Mi"}})
        assert code == 201, created
        assert created["spec"]["memory"] == "1024Mi"
    finally:
        devcluster.request("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.{group}")
