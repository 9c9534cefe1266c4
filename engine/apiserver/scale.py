"""The /scale subresource: an autoscaling/v1 Scale view of a parent object, and writing it back."""

from __future__ import annotations

from typing import Any

from engine.apiserver.objects import JsonDict, get_path, set_path, split_path
from engine.apiserver.resources import ResourceType, ScalePaths
from engine.apiserver.selectors import format_label_selector
from engine.apiserver.status import ErrorType, FieldError, invalid

SCALE_TYPE = ResourceType("autoscaling", "v1", "scale", "Scale", True)


def paths_of(rt: ResourceType) -> ScalePaths:
    return rt.scale or ScalePaths()


def from_parent(rt: ResourceType, obj: JsonDict) -> JsonDict:
    paths = paths_of(rt)
    meta = obj.get("metadata") or {}
    scale_meta = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                  if k in meta}
    spec_replicas = get_path(obj, split_path(paths.spec_replicas))
    status: dict[str, Any] = {"replicas": get_path(obj, split_path(paths.status_replicas)) or 0}
    selector = selector_of(rt, obj)
    if selector:
        status["selector"] = selector
    spec = {"replicas": spec_replicas} if spec_replicas else {}
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_meta, "spec": spec, "status": status}


def selector_of(rt: ResourceType, obj: JsonDict) -> str:
    path = paths_of(rt).label_selector
    if not path:
        return ""
    value = get_path(obj, split_path(path))
    if isinstance(value, dict) and rt.key == "/replicationcontrollers":  # a plain map of labels
        return ",".join(f"{k}={v}" for k, v in sorted(value.items()))
    if isinstance(value, dict):
        return format_label_selector(value)
    return str(value) if value else ""


def replicas_of(rt: ResourceType, name: str, scale_obj: JsonDict) -> int:
    """The requested replicas; 422 unless a non-negative integer."""
    value = (scale_obj.get("spec") or {}).get("replicas", 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        detail = "should be a non-negative integer" if rt.is_custom else "must be greater than or equal to 0"
        raise invalid(SCALE_TYPE, name, [FieldError(ErrorType.INVALID, "spec.replicas", value, detail)])
    return value


def to_parent(rt: ResourceType, parent: JsonDict, replicas: int) -> JsonDict:
    """A copy-free write of the replicas into the parent (the caller passes its own copy)."""
    set_path(parent, split_path(paths_of(rt).spec_replicas), replicas)
    return parent
