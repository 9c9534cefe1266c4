"""Server-side apply through Kube.apply: creation, idempotence, field conflicts, force, dry run, errors."""

from __future__ import annotations

import pytest

from engine.errors import FieldConflict, PermanentError
from engine.kube import Kube

from .helpers import configmap, deployment


def managers(obj: dict) -> set[tuple[str, str]]:
    return {(m["manager"], m["operation"]) for m in obj["metadata"].get("managedFields") or []}


def test_apply_creates_the_object_owned_by_kplan(kube: Kube, namespace: str) -> None:
    applied = kube.apply(configmap("settings", namespace, {"color": "blue"}))

    assert applied["data"] == {"color": "blue"}
    assert ("kplan", "Apply") in managers(applied)
    assert kube.get("v1", "ConfigMap", "settings", namespace) == applied


def test_applying_the_same_object_again_changes_nothing(kube: Kube, namespace: str) -> None:
    first = kube.apply(configmap("settings", namespace, {"color": "blue"}))
    second = kube.apply(configmap("settings", namespace, {"color": "blue"}))

    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


def test_apply_without_namespace_uses_the_kube_namespace(kube: Kube, namespace: str) -> None:
    obj = configmap("settings", namespace)
    del obj["metadata"]["namespace"]

    applied = kube.apply(obj)

    assert applied["metadata"]["namespace"] == namespace == kube.namespace


def test_conflict_with_another_manager_names_the_manager_and_the_field(kube: Kube, namespace: str) -> None:
    kube.apply(deployment("web", namespace, replicas=1))
    kube.patch("apps/v1", "Deployment", "web", namespace, {"spec": {"replicas": 5}}, field_manager="kubectl-edit")

    with pytest.raises(FieldConflict) as caught:
        kube.apply(deployment("web", namespace, replicas=2))

    assert caught.value.conflicts == (("kubectl-edit", ".spec.replicas"),)
    assert str(caught.value) == f'Deployment {namespace}/web: conflict with "kubectl-edit" on .spec.replicas'
    assert kube.get("apps/v1", "Deployment", "web", namespace)["spec"]["replicas"] == 5


def test_conflicts_with_an_applying_manager_are_all_listed(kube: Kube, namespace: str) -> None:
    kube.apply(configmap("settings", namespace, {"a": "1", "b": "1"}), field_manager="helm")

    with pytest.raises(FieldConflict) as caught:
        kube.apply(configmap("settings", namespace, {"a": "2", "b": "2"}))

    assert sorted(caught.value.conflicts) == [("helm", ".data.a"), ("helm", ".data.b")]
    assert 'conflicts with "helm" on .data.a and "helm" on .data.b' in str(caught.value)


def test_force_takes_the_field_over(kube: Kube, namespace: str) -> None:
    kube.apply(configmap("settings", namespace, {"color": "blue"}), field_manager="helm")

    taken = kube.apply(configmap("settings", namespace, {"color": "red"}), force=True)

    assert taken["data"] == {"color": "red"}
    assert ("kplan", "Apply") in managers(taken)
    with pytest.raises(FieldConflict):
        kube.apply(configmap("settings", namespace, {"color": "green"}), field_manager="helm")


def test_dry_run_returns_the_result_without_storing_it(kube: Kube, namespace: str) -> None:
    answer = kube.apply(configmap("settings", namespace, {"color": "blue"}), dry_run=True)

    assert answer["data"] == {"color": "blue"}
    assert kube.get("v1", "ConfigMap", "settings", namespace) is None


def test_an_invalid_object_is_a_permanent_error_naming_it(kube: Kube, namespace: str) -> None:
    bad = deployment("web", namespace)
    bad["spec"]["replicas"] = -1

    with pytest.raises(PermanentError, match=f"cannot apply Deployment {namespace}/web: "):
        kube.apply(bad)


def test_an_unknown_kind_is_a_permanent_error(kube: Kube, namespace: str) -> None:
    with pytest.raises(PermanentError, match=r"the server does not serve kind Gizmo in example\.com/v1"):
        kube.apply({"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}})
