"""Per-kind rules of the registry strategies: what create and update reset, allocate and count as a change."""

from __future__ import annotations

import base64
import threading
from typing import Any

from engine.apiserver.objects import JsonDict, copy_json, get_path, meta, name_of, uid_of
from engine.apiserver.resources import ResourceType

APPS_KEYS = ("apps/deployments", "apps/replicasets", "apps/statefulsets", "apps/daemonsets")
JOB_LABELS = ("batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name", "controller-uid", "job-name")


class Allocator:
    """Cluster IPs (10.96.0.0/16) and node ports (30000-32767), handed out in order, never reused."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next_ip = 10
        self._next_port = 30000

    def cluster_ip(self) -> str:
        with self._lock:
            n = self._next_ip
            self._next_ip += 1
        return f"10.96.{(n // 256) % 256}.{n % 256}"

    def node_port(self) -> int:
        with self._lock:
            port = self._next_port
            self._next_port = 30000 + (self._next_port - 30000 + 1) % 2768
        return port


def prepare_for_create(rt: ResourceType, obj: JsonDict, allocator: Allocator) -> None:
    """Reset what clients may not set on create and fill in what the server owns."""
    if rt.has_status:
        obj.pop("status", None)
    prepare = _CREATE.get(rt.key)
    if prepare is not None:
        prepare(obj, allocator)
    if rt.key == "/secrets":
        fold_string_data(obj)


def fold_string_data(secret: JsonDict) -> None:
    """A Secret's write-only `stringData` is merged into `data`, base64-encoded, as the API server's conversion does."""
    string_data = secret.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        encoded = {key: base64.b64encode(str(value).encode()).decode() for key, value in string_data.items()}
        secret["data"] = {**(secret.get("data") or {}), **encoded}


def _namespace_create(obj: JsonDict, _alloc: Allocator) -> None:
    obj["spec"] = {**(obj.get("spec") or {}), "finalizers": ["kubernetes"]}
    obj["status"] = {"phase": "Active"}
    labels = meta(obj).setdefault("labels", {}) or {}
    labels["kubernetes.io/metadata.name"] = name_of(obj)
    meta(obj)["labels"] = labels


def _pod_create(obj: JsonDict, _alloc: Allocator) -> None:
    obj["status"] = {"phase": "Pending", "qosClass": qos_class(obj.get("spec") or {})}


def _pvc_create(obj: JsonDict, _alloc: Allocator) -> None:
    obj["status"] = {"phase": "Pending"}
    _add_finalizer(obj, "kubernetes.io/pvc-protection")


def _pv_create(obj: JsonDict, _alloc: Allocator) -> None:
    obj["status"] = {"phase": "Pending"}
    _add_finalizer(obj, "kubernetes.io/pv-protection")


def _add_finalizer(obj: JsonDict, finalizer: str) -> None:
    finalizers = list(meta(obj).get("finalizers") or [])
    if finalizer not in finalizers:
        meta(obj)["finalizers"] = [*finalizers, finalizer]


def _service_create(obj: JsonDict, alloc: Allocator) -> None:
    spec = obj.setdefault("spec", {})
    kind = spec.get("type") or "ClusterIP"
    if kind != "ExternalName":
        if not spec.get("clusterIP"):
            ips = spec.get("clusterIPs") or [alloc.cluster_ip()]
            spec["clusterIP"], spec["clusterIPs"] = ips[0], list(ips)
        elif not spec.get("clusterIPs"):
            spec["clusterIPs"] = [spec["clusterIP"]]
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
    if kind in ("NodePort", "LoadBalancer"):
        for port in spec.get("ports") or []:
            if isinstance(port, dict) and not port.get("nodePort"):
                port["nodePort"] = alloc.node_port()
    obj["status"] = {"loadBalancer": {}}


def _job_create(obj: JsonDict, _alloc: Allocator) -> None:
    spec = obj.setdefault("spec", {})
    if spec.get("manualSelector"):
        return
    spec["manualSelector"] = False
    uid, name = uid_of(obj), name_of(obj)
    spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    template = spec.setdefault("template", {})
    template_meta = template.setdefault("metadata", {})
    labels = dict(template_meta.get("labels") or {})
    labels.update(dict(zip(JOB_LABELS, (uid, name, uid, name), strict=True)))
    template_meta["labels"] = labels


_CREATE = {
    "/namespaces": _namespace_create,
    "/pods": _pod_create,
    "/persistentvolumeclaims": _pvc_create,
    "/persistentvolumes": _pv_create,
    "/services": _service_create,
    "batch/jobs": _job_create,
}


def qos_class(spec: dict[str, Any]) -> str:
    containers = [c for c in (spec.get("containers") or []) + (spec.get("initContainers") or [])
                  if isinstance(c, dict)]
    resources = [c.get("resources") or {} for c in containers]
    if not any(r.get("requests") or r.get("limits") for r in resources):
        return "BestEffort"
    for r in resources:
        limits, requests = r.get("limits") or {}, {**(r.get("limits") or {}), **(r.get("requests") or {})}
        if not all(limits.get(k) and limits.get(k) == requests.get(k) for k in ("cpu", "memory")):
            return "Burstable"
    return "Guaranteed"


def prepare_for_update(rt: ResourceType, new: JsonDict, old: JsonDict, subresource: str) -> None:
    """Copy from the old object what this endpoint may not change."""
    if subresource == "status":
        _status_update(rt, new, old)
    elif subresource == "finalize":
        finalizers = get_path(new, ["spec", "finalizers"])
        new.clear()
        new.update(copy_json(old))
        new["spec"] = {**(old.get("spec") or {}), "finalizers": finalizers or []}
    elif rt.has_status:
        _keep(new, old, "status")
    if rt.key == "/namespaces" and subresource != "finalize":
        new["spec"] = {**(new.get("spec") or {}), "finalizers": get_path(old, ["spec", "finalizers"]) or []}
        if not new["spec"]["finalizers"]:
            del new["spec"]["finalizers"]
    if rt.key == "/services":
        _keep_allocations(new, old)
    if rt.key == "/secrets" and not subresource:
        fold_string_data(new)


def _keep(new: JsonDict, old: JsonDict, key: str) -> None:
    if key in old:
        new[key] = old[key]
    else:
        new.pop(key, None)


def _status_update(rt: ResourceType, new: JsonDict, old: JsonDict) -> None:
    status = new.get("status")
    if rt.is_custom:
        new.clear()
        new.update(old)
    else:
        for key in set(new) | set(old):
            if key not in ("metadata", "status", "apiVersion", "kind"):
                _keep(new, old, key)
        labels = get_path(old, ["metadata", "labels"])
        if labels is None:
            meta(new).pop("labels", None)
        else:
            meta(new)["labels"] = labels
    if status is None:
        new.pop("status", None)
    else:
        new["status"] = status


def _keep_allocations(new: JsonDict, old: JsonDict) -> None:
    spec, old_spec = new.get("spec"), old.get("spec") or {}
    if not isinstance(spec, dict):
        return
    for key in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
        if not spec.get(key) and old_spec.get(key) and spec.get("type", "ClusterIP") == old_spec.get("type",
                                                                                                     "ClusterIP"):
            spec[key] = old_spec[key]
    old_ports = {(p.get("port"), p.get("protocol", "TCP")): p for p in old_spec.get("ports") or []
                 if isinstance(p, dict)}
    for port in spec.get("ports") or []:
        if isinstance(port, dict) and not port.get("nodePort"):
            previous = old_ports.get((port.get("port"), port.get("protocol", "TCP")))
            if previous and previous.get("nodePort") and spec.get("type") in ("NodePort", "LoadBalancer"):
                port["nodePort"] = previous["nodePort"]


def spec_changed(rt: ResourceType, new: JsonDict, old: JsonDict) -> bool:
    """Whether the write bumps metadata.generation (only for resources that have one)."""
    if not rt.has_generation:
        return False
    if rt.is_custom:
        skip = ("metadata", "status") if rt.has_status else ("metadata",)
        return {k: v for k, v in new.items() if k not in skip} != {k: v for k, v in old.items() if k not in skip}
    return new.get("spec") != old.get("spec")
