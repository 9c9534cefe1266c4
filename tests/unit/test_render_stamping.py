"""Stamping of rendered objects: kplan labels and annotations, the Instance's namespace, and the
ownerReference only for namespaced objects in the Instance's namespace when its uid is known."""

from __future__ import annotations

from typing import Any

import pytest
from render_helpers import SMALL, configmap, context, package

from engine.render import (
    ANNOTATION_PLAN,
    ANNOTATION_STEP,
    LABEL_INSTANCE,
    LABEL_MANAGED_BY,
    LABEL_OPERATOR,
    is_namespaced,
    render_template,
)

OWNER = {
    "apiVersion": "kplan.dev/v1alpha1",
    "kind": "Instance",
    "name": "cache",
    "uid": "uid-1",
    "controller": True,
    "blockOwnerDeletion": True,
}


def stamped(source: str, uid: str | None = "uid-1", **ctx: Any) -> dict[str, Any]:
    (obj,) = render_template(package({"t.yaml": source}), "t.yaml", context(uid=uid, **ctx), limits=SMALL)
    return obj


def test_labels_and_annotations() -> None:
    obj = stamped(configmap("a"), plan="deploy", step="app")
    assert obj["metadata"]["labels"] == {LABEL_MANAGED_BY: "kplan", LABEL_INSTANCE: "cache", LABEL_OPERATOR: "redis"}
    assert obj["metadata"]["annotations"] == {ANNOTATION_PLAN: "deploy", ANNOTATION_STEP: "app"}


def test_template_labels_are_kept_and_kplan_labels_win() -> None:
    labelled = "  name: a\n  labels:\n    app: web\n    kplan.dev/instance: other\n"
    source = configmap("a").replace("  name: a\n", labelled)
    labels = stamped(source)["metadata"]["labels"]
    assert labels["app"] == "web"
    assert labels[LABEL_INSTANCE] == "cache"


def test_no_plan_annotations_outside_a_plan() -> None:
    assert "annotations" not in stamped(configmap("a"))["metadata"]


def test_namespaced_object_gets_the_instance_namespace_and_owner() -> None:
    metadata = stamped(configmap("a"))["metadata"]
    assert metadata["namespace"] == "shop"
    assert metadata["ownerReferences"] == [OWNER]


def test_same_namespace_written_out_still_gets_the_owner() -> None:
    metadata = stamped(configmap("a").replace("  name: a\n", "  name: a\n  namespace: shop\n"))["metadata"]
    assert metadata["ownerReferences"] == [OWNER]


def test_other_namespace_keeps_it_and_gets_no_owner() -> None:
    metadata = stamped(configmap("a").replace("  name: a\n", "  name: a\n  namespace: other\n"))["metadata"]
    assert metadata["namespace"] == "other"
    assert "ownerReferences" not in metadata
    assert metadata["labels"][LABEL_INSTANCE] == "cache"


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("v1", "Namespace"),
        ("rbac.authorization.k8s.io/v1", "ClusterRole"),
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ("storage.k8s.io/v1", "StorageClass"),
        ("scheduling.k8s.io/v1", "PriorityClass"),
        ("v1", "PersistentVolume"),
    ],
)
def test_cluster_scoped_object_gets_no_namespace_and_no_owner(api_version: str, kind: str) -> None:
    metadata = stamped(f"apiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: a\n")["metadata"]
    assert "namespace" not in metadata
    assert "ownerReferences" not in metadata
    assert metadata["labels"][LABEL_MANAGED_BY] == "kplan"


def test_no_owner_without_an_instance_uid() -> None:
    metadata = stamped(configmap("a"), uid=None)["metadata"]
    assert metadata["namespace"] == "shop"
    assert "ownerReferences" not in metadata


def test_existing_controller_reference_is_kept_and_kplan_becomes_a_plain_owner() -> None:
    other = "  ownerReferences:\n  - {apiVersion: v1, kind: Thing, name: t, uid: u2, controller: true}\n"
    metadata = stamped(configmap("a").replace("  name: a\n", "  name: a\n" + other))["metadata"]
    assert [ref["uid"] for ref in metadata["ownerReferences"]] == ["u2", "uid-1"]
    assert metadata["ownerReferences"][1]["controller"] is False


def test_an_existing_reference_to_the_instance_is_not_duplicated() -> None:
    mine = "  ownerReferences:\n  - {apiVersion: kplan.dev/v1alpha1, kind: Instance, name: cache, uid: uid-1}\n"
    metadata = stamped(configmap("a").replace("  name: a\n", "  name: a\n" + mine))["metadata"]
    assert metadata["ownerReferences"] == [OWNER]


@pytest.mark.parametrize(
    ("api_version", "kind", "expected"),
    [
        ("v1", "ConfigMap", True),
        ("apps/v1", "Deployment", True),
        ("v1", "Node", False),
        ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", False),
        ("example.com/v1", "Widget", True),
        ("example.com/v1", "ClusterRole", True),
        ("kplan.dev/v1alpha1", "Instance", True),
    ],
)
def test_is_namespaced(api_version: str, kind: str, expected: bool) -> None:
    assert is_namespaced(api_version, kind) is expected
