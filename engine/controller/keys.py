"""Which Instances a watch event concerns, as `namespace/name` keys: requests carry names, never events."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["InstanceKeys", "key"]

GROUP = "kplan.dev"
INSTANCE_LABEL = "kplan.dev/instance"
INSTANCE_NAMESPACE = "kplan.dev/instance-namespace"
Json = Mapping[str, Any]
ListInstances = Callable[[str], Iterable[Json]]  # the cached Instances of one namespace
GetObject = Callable[[str, str, str, str], Json | None]  # (apiVersion, kind, namespace, name) -> the cached object


def key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def is_kplan(api_version: Any, kind: str, obj_kind: Any) -> bool:
    return str(api_version or "").partition("/")[0] == GROUP and obj_kind == kind


class InstanceKeys:
    """Maps an object to the Instances to reconcile when it changes.

    An Instance → itself; an OperatorVersion → the Instances that run it or ran it last; anything else →
    the Instance of its ownerReference, else of its `kplan.dev/instance` label (in the namespace of its
    `kplan.dev/instance-namespace` annotation, else its own); a Pod a Job controls → the Job's Instances, since
    a step waiting on a Job reads its pods (why they cannot be scheduled) and pod templates need not carry labels.
    """

    def __init__(self, list_instances: ListInstances, get_object: GetObject | None = None) -> None:
        self._list_instances = list_instances
        self._get_object = get_object

    def __call__(self, obj: Json) -> set[str]:
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "")
        found = owners(obj)
        if is_kplan(obj.get("apiVersion"), "Instance", obj.get("kind")):
            found.add(key(namespace, str(meta.get("name"))))
        elif is_kplan(obj.get("apiVersion"), "OperatorVersion", obj.get("kind")):
            found |= self._users(namespace, str(meta.get("name")))
        if not found:
            found |= labelled(obj)
        if not found and obj.get("kind") == "Pod":
            found |= self._via_job(obj)
        return found

    def _via_job(self, pod: Json) -> set[str]:
        meta = pod.get("metadata") or {}
        for ref in meta.get("ownerReferences") or []:
            if ref.get("controller") and ref.get("kind") == "Job" and self._get_object is not None:
                job = self._get_object(str(ref.get("apiVersion")), "Job", str(meta.get("namespace")), str(ref["name"]))
                return self(job) if job else set()
        return set()

    def _users(self, namespace: str, version: str) -> set[str]:
        return {
            key(namespace, str((i.get("metadata") or {}).get("name")))
            for i in self._list_instances(namespace)
            if version in versions_of(i)
        }


def owners(obj: Json) -> set[str]:
    meta = obj.get("metadata") or {}
    namespace = str(meta.get("namespace") or "")
    return {
        key(namespace, str(o.get("name")))
        for o in meta.get("ownerReferences") or []
        if is_kplan(o.get("apiVersion"), "Instance", o.get("kind")) and namespace
    }


def labelled(obj: Json) -> set[str]:
    meta = obj.get("metadata") or {}
    name = (meta.get("labels") or {}).get(INSTANCE_LABEL)
    namespace = (meta.get("annotations") or {}).get(INSTANCE_NAMESPACE) or meta.get("namespace")
    return {key(str(namespace), str(name))} if name and namespace else set()


def versions_of(instance: Json) -> set[str]:
    """The OperatorVersions an Instance depends on: the one it asks for and the one its last plan ran."""
    wanted = ((instance.get("spec") or {}).get("operatorVersion") or {}).get("name")
    ran = (((instance.get("status") or {}).get("lastRun")) or {}).get("operatorVersion")
    return {str(v) for v in (wanted, ran) if v}
