"""Stamp rendered objects with kplan's labels, annotations, namespace and owner reference."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "ANNOTATION_CONFIG_HASH",
    "ANNOTATION_PLAN",
    "ANNOTATION_STEP",
    "INSTANCE_API_VERSION",
    "LABEL_INSTANCE",
    "LABEL_MANAGED_BY",
    "LABEL_OPERATOR",
    "claim_templates_as_live",
    "is_namespaced",
    "stamp",
]

LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
LABEL_INSTANCE = "kplan.dev/instance"
LABEL_OPERATOR = "kplan.dev/operator"
ANNOTATION_PLAN = "kplan.dev/plan"
ANNOTATION_STEP = "kplan.dev/step"
ANNOTATION_CONFIG_HASH = "kplan.dev/config-hash"
INSTANCE_API_VERSION = "kplan.dev/v1alpha1"

# Cluster-scoped kinds of Kubernetes and its common add-ons, by API group.
_CLUSTER_SCOPED: dict[str, frozenset[str]] = {
    "": frozenset({"Namespace", "Node", "PersistentVolume", "ComponentStatus"}),
    "rbac.authorization.k8s.io": frozenset({"ClusterRole", "ClusterRoleBinding"}),
    "apiextensions.k8s.io": frozenset({"CustomResourceDefinition"}),
    "apiregistration.k8s.io": frozenset({"APIService"}),
    "storage.k8s.io": frozenset(
        {"StorageClass", "CSIDriver", "CSINode", "VolumeAttachment", "VolumeAttributesClass"}
    ),
    "scheduling.k8s.io": frozenset({"PriorityClass"}),
    "node.k8s.io": frozenset({"RuntimeClass"}),
    "networking.k8s.io": frozenset({"IngressClass", "IPAddress", "ServiceCIDR"}),
    "policy": frozenset({"PodSecurityPolicy"}),
    "certificates.k8s.io": frozenset({"CertificateSigningRequest", "ClusterTrustBundle"}),
    "admissionregistration.k8s.io": frozenset(
        {
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyBinding",
            "MutatingAdmissionPolicy",
            "MutatingAdmissionPolicyBinding",
        }
    ),
    "flowcontrol.apiserver.k8s.io": frozenset({"FlowSchema", "PriorityLevelConfiguration"}),
    "authentication.k8s.io": frozenset({"TokenReview", "SelfSubjectReview"}),
    "authorization.k8s.io": frozenset(
        {"SubjectAccessReview", "SelfSubjectAccessReview", "SelfSubjectRulesReview"}
    ),
    "resource.k8s.io": frozenset({"DeviceClass", "ResourceSlice"}),
}


def is_namespaced(api_version: str, kind: str) -> bool:
    """Whether objects of this kind live in a namespace (unknown kinds are taken to)."""
    group = api_version.rpartition("/")[0]
    return kind not in _CLUSTER_SCOPED.get(group, frozenset())


def stamp(
    obj: dict[str, Any],
    *,
    instance: str,
    namespace: str,
    operator: str,
    plan: str,
    step: str,
    instance_uid: str | None,
) -> dict[str, Any]:
    """Add kplan's labels and annotations, the Instance's namespace and its ownerReference.

    Namespaced objects without a namespace get the Instance's. The ownerReference (the
    Instance as controller) is added only when `instance_uid` is known and the object is
    namespaced in the Instance's namespace: Kubernetes forbids cluster-scoped or
    cross-namespace owners, so those objects are tracked by label instead. When the
    template already names another controller, kplan's reference is added as a plain owner.
    Plan and step annotations are set when the render happens within a plan and step.
    """
    metadata = obj.setdefault("metadata", {})
    namespaced = is_namespaced(str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    if namespaced and not metadata.get("namespace"):
        metadata["namespace"] = namespace
    ours = {LABEL_MANAGED_BY: "kplan", LABEL_INSTANCE: instance, LABEL_OPERATOR: operator}
    metadata["labels"] = {**(metadata.get("labels") or {}), **ours}
    _label_claim_templates(obj, ours)
    annotations = metadata.get("annotations") or {}
    annotations.update({key: value for key, value in ((ANNOTATION_PLAN, plan), (ANNOTATION_STEP, step)) if value})
    if annotations:
        metadata["annotations"] = annotations
    if instance_uid and namespaced and metadata.get("namespace") == namespace:
        _add_owner(metadata, instance, instance_uid)
    return obj


def _label_claim_templates(obj: dict[str, Any], labels: dict[str, str]) -> None:
    """A StatefulSet's claim templates get kplan's labels too, so the volumes it makes (which outlive it, as
    Kubernetes keeps them) can be found: `kubectl get pvc -l kplan.dev/instance=NAME`."""
    if obj.get("kind") != "StatefulSet" or not isinstance(obj.get("spec"), dict):
        return
    for template in obj["spec"].get("volumeClaimTemplates") or []:
        if isinstance(template, dict):
            claim = template.setdefault("metadata", {})
            if isinstance(claim, dict):
                claim["labels"] = {**(claim.get("labels") or {}), **labels}


def claim_templates_as_live(obj: Mapping[str, Any], live: Mapping[str, Any] | None) -> dict[str, Any]:
    """`obj` with the claim templates of a StatefulSet that exists without kplan's labels on them (made by a kplan
    before it labelled claim templates) left unlabelled: the API server refuses any change of
    `spec.volumeClaimTemplates`, so labelling them would make every later apply of that StatefulSet fail."""
    if obj.get("kind") != "StatefulSet" or not live or not isinstance(obj.get("spec"), dict):
        return dict(obj)
    unlabelled = {str((t.get("metadata") or {}).get("name")) for t in (live.get("spec") or {}).get(
        "volumeClaimTemplates") or [] if isinstance(t, Mapping)
        and LABEL_INSTANCE not in ((t.get("metadata") or {}).get("labels") or {})}
    if not unlabelled:
        return dict(obj)
    ours = (LABEL_MANAGED_BY, LABEL_INSTANCE, LABEL_OPERATOR)
    templates = []
    for template in obj["spec"].get("volumeClaimTemplates") or []:
        meta = template.get("metadata") if isinstance(template, dict) else None
        if isinstance(meta, dict) and str(meta.get("name")) in unlabelled:
            labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in ours}
            meta = {k: v for k, v in meta.items() if k != "labels"} | ({"labels": labels} if labels else {})
            template = {**template, "metadata": meta}
        templates.append(template)
    return {**obj, "spec": {**obj["spec"], "volumeClaimTemplates": templates}}


def _add_owner(metadata: dict[str, Any], instance: str, uid: str) -> None:
    existing = metadata.get("ownerReferences") or []
    owners = [ref for ref in existing if not (isinstance(ref, dict) and ref.get("uid") == uid)]
    other_controller = any(isinstance(ref, dict) and ref.get("controller") for ref in owners)
    owners.append(
        {
            "apiVersion": INSTANCE_API_VERSION,
            "kind": "Instance",
            "name": instance,
            "uid": uid,
            "controller": not other_controller,
            "blockOwnerDeletion": True,
        }
    )
    metadata["ownerReferences"] = owners
