"""Drift and uninstall: a field kplan owns, changed by another manager, is applied again and an Event says so;
deleting the Instance runs the cleanup plan and leaves no kplan-labelled object behind, cluster-scoped included."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engine.controller import Manager

if TYPE_CHECKING:
    from conftest import Changes, Kplan


def test_a_field_changed_by_another_manager_is_reverted_and_an_event_recorded(kplan: Kplan, manager: Manager) -> None:
    kplan.install("params", "svc", {"size": 2})
    kplan.wait_plan("svc", "deploy")

    kplan.kube.patch("v1", "ConfigMap", "svc-config", kplan.namespace, {"data": {"size": "99"}},
                     field_manager="kubectl-edit")

    kplan.wait(lambda: kplan.kube.get("v1", "ConfigMap", "svc-config", kplan.namespace)["data"]["size"] == "2")
    events = kplan.wait(lambda: kplan.events("svc-config", "DriftCorrected"))
    assert events[0]["involvedObject"]["kind"] == "ConfigMap"
    assert "svc-config" in events[0]["message"]
    assert kplan.plan("svc", "deploy")["status"] == "COMPLETE"


def test_a_deleted_object_is_applied_again(kplan: Kplan, manager: Manager) -> None:
    kplan.install("params", "svc")
    kplan.wait_plan("svc", "deploy")
    first = kplan.kube.get("v1", "ConfigMap", "svc-config", kplan.namespace)

    kplan.kube.delete("v1", "ConfigMap", "svc-config", kplan.namespace)

    again = kplan.wait(lambda: kplan.kube.get("v1", "ConfigMap", "svc-config", kplan.namespace))
    assert again["metadata"]["uid"] != first["metadata"]["uid"]
    assert again["data"] == first["data"]


def until(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    """Wait for in-process state (no cluster change announces it): look every 10 ms until the deadline."""
    tick, deadline = threading.Event(), time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        tick.wait(0.01)


def labelled(kplan: Kplan, name: str) -> list[dict[str, Any]]:
    """Every object of the kinds the package uses that carries the Instance's label (cluster-scoped ones: of
    this namespace's Instance, other tests may have left theirs)."""
    selector = f"kplan.dev/instance={name}"
    roles = kplan.kube.list("rbac.authorization.k8s.io/v1", "ClusterRole", label_selector=selector)
    return [
        *kplan.kube.list("v1", "ConfigMap", kplan.namespace, label_selector=selector),
        *kplan.kube.list("batch/v1", "Job", kplan.namespace, label_selector=selector),
        *[r for r in roles if r["metadata"]["name"].startswith(f"{kplan.namespace}-")],
    ]


def test_uninstall_runs_cleanup_and_leaves_no_labelled_object(
    kplan: Kplan, manager: Manager, changes: Changes
) -> None:
    kplan.install("uninstall", "gone")
    kplan.wait_plan("gone", "deploy")
    role = f"{kplan.namespace}-gone-reader"
    assert kplan.kube.get("rbac.authorization.k8s.io/v1", "ClusterRole", role) is not None
    assert len(labelled(kplan, "gone")) == 2

    kplan.delete("gone")

    kplan.wait(lambda: kplan.instance("gone") is None)
    assert changes.completed("gone-cleanup") > changes.first(lambda c: c.kind == "Instance" and c.type == "MODIFIED"
                                                              and bool(c.obj["metadata"].get("deletionTimestamp")))
    kplan.wait(lambda: not labelled(kplan, "gone"))
    assert kplan.kube.get("rbac.authorization.k8s.io/v1", "ClusterRole", role) is None


def test_a_deleted_cluster_scoped_object_is_applied_again(kplan: Kplan, manager: Manager) -> None:
    kplan.install("uninstall", "gone")
    kplan.wait_plan("gone", "deploy")
    role = f"{kplan.namespace}-gone-reader"
    first = kplan.kube.get("rbac.authorization.k8s.io/v1", "ClusterRole", role)

    kplan.kube.delete("rbac.authorization.k8s.io/v1", "ClusterRole", role)

    again = kplan.wait(lambda: (found := kplan.kube.get("rbac.authorization.k8s.io/v1", "ClusterRole", role))
                       and found["metadata"]["uid"] != first["metadata"]["uid"] and found)
    assert again["metadata"]["annotations"]["kplan.dev/instance-namespace"] == kplan.namespace
    assert again["rules"] == first["rules"]


def test_an_instance_whose_package_is_gone_is_still_removed_with_its_objects(
    kplan: Kplan, manager: Manager, changes: Changes
) -> None:
    kplan.install("uninstall", "gone")
    kplan.wait_plan("gone", "deploy")
    kplan.kube.delete("kplan.dev/v1alpha1", "OperatorVersion", "uninstall-0.1.0", kplan.namespace)
    until(lambda: manager.caches.get("kplan.dev/v1alpha1", "OperatorVersion", "uninstall-0.1.0", kplan.namespace)
          is None)  # the manager knows it is gone

    kplan.delete("gone")

    kplan.wait(lambda: kplan.instance("gone") is None)
    kplan.wait(lambda: not labelled(kplan, "gone"))
    assert changes.of("Job", "gone-cleanup") == []  # no package, no cleanup plan
