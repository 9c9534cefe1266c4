"""Kube.update_status on custom resources: the status subresource, whole-status replacement, stale copies."""

from __future__ import annotations

from typing import Any

import pytest

from engine.kube import Kube

from .helpers import crd, install_crd


def widget(api_version: str, namespace: str, size: int = 1) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "Widget", "metadata": {"name": "w", "namespace": namespace},
            "spec": {"size": size}}


@pytest.fixture
def widgets(kube: Kube, namespace: str) -> str:
    """The apiVersion of a Widget kind with a status subresource, registered for this test only."""
    group = f"{namespace}.status.tests.kplan.dev"
    install_crd(kube, crd(group, "Widget"))
    return f"{group}/v1"


def test_update_status_writes_the_status_and_returns_the_new_object(kube: Kube, namespace: str, widgets: str) -> None:
    created = kube.create(widget(widgets, namespace))

    updated = kube.update_status(created, {"phase": "Ready"})

    assert updated["status"] == {"phase": "Ready"}
    assert kube.get(widgets, "Widget", "w", namespace)["status"] == {"phase": "Ready"}
    assert updated["metadata"]["generation"] == created["metadata"]["generation"]


def test_update_status_leaves_the_spec_alone(kube: Kube, namespace: str, widgets: str) -> None:
    created = kube.create(widget(widgets, namespace, size=1))

    kube.update_status({**created, "spec": {"size": 99}}, {"phase": "Ready"})

    assert kube.get(widgets, "Widget", "w", namespace)["spec"] == {"size": 1}


def test_update_status_replaces_the_whole_status(kube: Kube, namespace: str, widgets: str) -> None:
    first = kube.update_status(kube.create(widget(widgets, namespace)), {"phase": "Failed", "message": "boom"})

    second = kube.update_status(first, {"phase": "Ready"})

    assert second["status"] == {"phase": "Ready"}


def test_update_status_from_a_stale_copy_rereads_and_succeeds(kube: Kube, namespace: str, widgets: str) -> None:
    stale = kube.create(widget(widgets, namespace, size=1))
    kube.patch(widgets, "Widget", "w", namespace, {"spec": {"size": 2}})
    gets = kube.requests["get"]

    updated = kube.update_status(stale, {"phase": "Ready"})

    assert updated["status"] == {"phase": "Ready"}
    assert updated["spec"] == {"size": 2}
    assert kube.requests["get"] == gets + 1


def test_update_status_without_a_status_subresource_updates_the_object(kube: Kube, namespace: str) -> None:
    group = f"{namespace}.nostatus.tests.kplan.dev"
    install_crd(kube, crd(group, "Widget", status=False))
    created = kube.create(widget(f"{group}/v1", namespace))

    updated = kube.update_status(created, {"phase": "Ready"})

    assert kube.get(f"{group}/v1", "Widget", "w", namespace)["status"] == {"phase": "Ready"} == updated["status"]
