"""Kube reads and writes of whole objects: get, list, create, replace, patch, delete."""

from __future__ import annotations

import pytest

from engine.kube import AlreadyExists, Conflict, Kube

from .helpers import configmap


def test_get_of_a_missing_object_is_none(kube: Kube, namespace: str) -> None:
    assert kube.get("v1", "ConfigMap", "absent", namespace) is None


def test_create_then_get_returns_the_stored_object(kube: Kube, namespace: str) -> None:
    created = kube.create(configmap("settings", namespace, {"a": "1"}))

    got = kube.get("v1", "ConfigMap", "settings", namespace)

    assert got is not None
    assert got["metadata"]["uid"] == created["metadata"]["uid"]
    assert (got["apiVersion"], got["kind"], got["data"]) == ("v1", "ConfigMap", {"a": "1"})


def test_create_of_a_taken_name_is_already_exists(kube: Kube, namespace: str) -> None:
    kube.create(configmap("settings", namespace))

    with pytest.raises(AlreadyExists, match=f"ConfigMap {namespace}/settings"):
        kube.create(configmap("settings", namespace))


def test_list_filters_by_label_and_types_the_items(kube: Kube, namespace: str) -> None:
    kube.create(configmap("a", namespace, tier="web"))
    kube.create(configmap("b", namespace, tier="db"))

    web = kube.list("v1", "ConfigMap", namespace, label_selector="tier=web")

    assert [(o["metadata"]["name"], o["kind"], o["apiVersion"]) for o in web] == [("a", "ConfigMap", "v1")]


def test_list_without_namespace_covers_all_namespaces(kube: Kube, namespace: str) -> None:
    kube.create(configmap("mine", namespace, owner="kube-tests"))

    found = kube.list("v1", "ConfigMap", label_selector="owner=kube-tests")

    assert ("mine", namespace) in {(o["metadata"]["name"], o["metadata"]["namespace"]) for o in found}


def test_list_with_version_returns_a_resource_version_to_watch_from(kube: Kube, namespace: str) -> None:
    kube.create(configmap("a", namespace))

    items, version = kube.list_with_version("v1", "ConfigMap", namespace)

    assert [o["metadata"]["name"] for o in items] == ["a"]
    assert version != ""


def test_replace_with_a_stale_resource_version_is_a_conflict(kube: Kube, namespace: str) -> None:
    stale = kube.create(configmap("settings", namespace, {"a": "1"}))
    kube.replace({**stale, "data": {"a": "2"}})

    with pytest.raises(Conflict):
        kube.replace({**stale, "data": {"a": "3"}})
    assert kube.get("v1", "ConfigMap", "settings", namespace)["data"] == {"a": "2"}


def test_merge_patch_and_json_patch(kube: Kube, namespace: str) -> None:
    kube.create(configmap("settings", namespace, {"a": "1", "b": "1"}))

    kube.patch("v1", "ConfigMap", "settings", namespace, {"data": {"a": None, "c": "3"}})
    patched = kube.patch("v1", "ConfigMap", "settings", namespace, [{"op": "replace", "path": "/data/b", "value": "2"}],
                         content_type="application/json-patch+json")

    assert patched["data"] == {"b": "2", "c": "3"}


def test_delete_is_true_once_and_false_when_already_gone(kube: Kube, namespace: str) -> None:
    kube.create(configmap("settings", namespace))

    assert kube.delete("v1", "ConfigMap", "settings", namespace) is True
    assert kube.get("v1", "ConfigMap", "settings", namespace) is None
    assert kube.delete("v1", "ConfigMap", "settings", namespace) is False


def test_cluster_scoped_kinds_ignore_the_namespace(kube: Kube, namespace: str) -> None:
    got = kube.get("v1", "Namespace", namespace)

    assert got is not None and got["metadata"]["name"] == namespace
    assert "namespace" not in got["metadata"]
