"""StatefulSet rules of apps/validation: its update strategy, and the four spec fields immutable on update
(selector, volumeClaimTemplates, serviceName, podManagementPolicy), printed as the real server prints the
internal Go values."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.apiserver.objects import JsonDict
from engine.apiserver.status import ErrorType, FieldError, GoJson, go_json

__all__ = ["spec_errors", "update_errors"]

IMMUTABLE = "field is immutable"
# ObjectMeta's json names, in its field order (all omitempty), as an internal PersistentVolumeClaim inlines them.
META_FIELDS = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
               "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
               "ownerReferences", "finalizers", "managedFields")


def spec_errors(spec: Mapping[str, Any]) -> list[FieldError]:
    strategy = spec.get("updateStrategy") or {}
    rolling = strategy.get("rollingUpdate")
    if strategy.get("type") == "OnDelete" and rolling is not None:
        return [FieldError(ErrorType.INVALID, "spec.updateStrategy.rollingUpdate", _rolling_update(rolling),
                           "only allowed for updateStrategy 'RollingUpdate'")]
    return []


def update_errors(new: JsonDict, old: JsonDict) -> list[FieldError]:
    """The immutable fields that changed, in apps/validation's order (the selector's is checked with the other
    workloads')."""
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    errors: list[FieldError] = []
    claims = new_spec.get("volumeClaimTemplates") or []
    if claims != (old_spec.get("volumeClaimTemplates") or []):
        errors.append(FieldError(ErrorType.INVALID, "spec.volumeClaimTemplates",
                                 GoJson("[" + ",".join(_claim(c).text for c in claims) + "]"), IMMUTABLE))
    for field in ("serviceName", "podManagementPolicy"):
        if new_spec.get(field) != old_spec.get(field):
            errors.append(FieldError(ErrorType.INVALID, f"spec.{field}", new_spec.get(field, ""), IMMUTABLE))
    return errors


def _rolling_update(rolling: Mapping[str, Any]) -> GoJson:
    return go_json({"Partition": rolling.get("partition", 0), "MaxUnavailable": rolling.get("maxUnavailable")})


def _claim(claim: Mapping[str, Any]) -> GoJson:
    """An internal PersistentVolumeClaim as json.Marshal prints it: ObjectMeta inlined with its json names, Spec
    and Status with Go's field names (they have no json tags), every pointer and slice present."""
    meta = claim.get("metadata") or {}
    spec = claim.get("spec") or {}
    status = claim.get("status") or {}
    resources = spec.get("resources") or {}
    return go_json({
        **{k: meta[k] for k in META_FIELDS if meta.get(k) not in (None, "", 0, [], {})},
        "Spec": {
            "AccessModes": spec.get("accessModes"), "Selector": spec.get("selector"),
            "Resources": {"Limits": resources.get("limits"), "Requests": resources.get("requests")},
            "VolumeName": spec.get("volumeName", ""), "StorageClassName": spec.get("storageClassName"),
            "VolumeMode": spec.get("volumeMode"), "DataSource": _reference(spec.get("dataSource")),
            "DataSourceRef": _reference(spec.get("dataSourceRef"), namespaced=True),
            "VolumeAttributesClassName": spec.get("volumeAttributesClassName"),
        },
        "Status": {
            "Phase": status.get("phase", ""), "AccessModes": status.get("accessModes"),
            "Capacity": status.get("capacity"), "Conditions": status.get("conditions"),
            "AllocatedResources": status.get("allocatedResources"),
            "AllocatedResourceStatuses": status.get("allocatedResourceStatuses"),
            "CurrentVolumeAttributesClassName": status.get("currentVolumeAttributesClassName"),
            "ModifyVolumeStatus": status.get("modifyVolumeStatus"), "HealthStatus": status.get("healthStatus"),
        },
    })


def _reference(ref: Mapping[str, Any] | None, namespaced: bool = False) -> dict[str, Any] | None:
    if ref is None:
        return None
    fields = {"APIGroup": ref.get("apiGroup"), "Kind": ref.get("kind", ""), "Name": ref.get("name", "")}
    return fields | ({"Namespace": ref.get("namespace")} if namespaced else {})
