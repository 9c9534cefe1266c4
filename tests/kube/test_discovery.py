"""Kube.resource: kinds the server serves, cached, and found again once a CRD for them is installed."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.errors import PermanentError
from engine.kube import Kube, Resource

from .helpers import crd, install_crd


def test_built_in_kinds_are_described(kube: Kube) -> None:
    assert kube.resource("apps/v1", "Deployment") == Resource("apps/v1", "Deployment", "deployments", True, True)
    assert kube.resource("v1", "ConfigMap") == Resource("v1", "ConfigMap", "configmaps", True, False)
    assert kube.resource("v1", "Namespace").namespaced is False


def test_resource_paths() -> None:
    deployments = Resource("apps/v1", "Deployment", "deployments", True, True)
    namespaces = Resource("v1", "Namespace", "namespaces", False, True)

    assert deployments.path() == "/apis/apps/v1/deployments"
    assert deployments.path("shop", "web", "status") == "/apis/apps/v1/namespaces/shop/deployments/web/status"
    assert namespaces.path("ignored", "shop") == "/api/v1/namespaces/shop"


def test_lookups_are_cached(kube: Kube) -> None:
    kube.resource("apps/v1", "Deployment")
    asked = kube.requests["discovery"]

    kube.resource("apps/v1", "Deployment")
    kube.resource("apps/v1", "StatefulSet")

    assert kube.requests["discovery"] == asked


def test_an_unknown_kind_is_a_permanent_error(kube: Kube) -> None:
    with pytest.raises(PermanentError, match="the server does not serve kind Gizmo in apps/v1"):
        kube.resource("apps/v1", "Gizmo")
    with pytest.raises(PermanentError, match=r"the server does not serve kind Gizmo in nowhere\.example/v1"):
        kube.resource("nowhere.example/v1", "Gizmo")


def test_a_kind_missed_before_its_crd_was_installed_is_found_after(kube: Kube, namespace: str) -> None:
    group = f"{namespace}.discovery.tests.kplan.dev"
    with pytest.raises(PermanentError):
        kube.resource(f"{group}/v1", "Gadget")

    install_crd(kube, crd(group, "Gadget"))

    assert kube.resource(f"{group}/v1", "Gadget") == Resource(f"{group}/v1", "Gadget", "gadgets", True, True)


def test_lookups_that_miss_together_wait_for_one_answer(kube: Kube) -> None:
    """Caches started at once (kplan run starts every kind its plan applies) ask for a group-version once."""
    asked = kube.requests["discovery"]
    kinds = ["ConfigMap", "Secret", "Service", "Pod", "ServiceAccount", "PersistentVolumeClaim"]
    start = threading.Barrier(len(kinds))

    def look_up(kind: str) -> Resource:
        start.wait()
        return kube.resource("v1", kind)

    with ThreadPoolExecutor(len(kinds)) as pool:
        found = list(pool.map(look_up, kinds))

    assert [r.kind for r in found] == kinds
    assert kube.requests["discovery"] - asked == 1
