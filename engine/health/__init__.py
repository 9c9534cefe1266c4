"""Health of one Kubernetes object, computed from the object alone: one pure function per kind, plus package rules."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from engine.health.batch import job, pod
from engine.health.jsonpath import InvalidRule, parse_path
from engine.health.objects import Obj, as_map, group_kind
from engine.health.others import customresourcedefinition, generic, namespace, persistentvolumeclaim, service
from engine.health.rules import by_package_rules
from engine.health.verdicts import Health, Status, describe, progressing
from engine.health.workloads import daemonset, deployment, replicaset, statefulset
from engine.model import HealthRule

__all__ = ["Health", "Status", "compute", "describe", "path_error"]


def compute(obj: Obj | None, rules: Sequence[HealthRule] = (), *, ref: str = "") -> Status:
    """Health of `obj` (None: not found, named by `ref`); package `rules` for its group and kind come first."""
    if obj is None:
        return Status(Health.PROGRESSING, f"{ref or 'object'} not found")
    status = by_package_rules(obj, rules) or by_kind(obj)
    if status.health is Health.HEALTHY and as_map(obj.get("metadata")).get("deletionTimestamp"):
        return progressing(obj, "being deleted")
    return status


def path_error(path: str) -> str | None:
    """Why a health rule's jsonPath cannot be used, or None when it can (for package verification)."""
    try:
        parse_path(path)
    except InvalidRule as err:
        return str(err)
    return None


BUILT_IN: Mapping[tuple[str, str], Callable[[Obj], Status]] = {
    ("apps", "Deployment"): deployment,
    ("apps", "StatefulSet"): statefulset,
    ("apps", "DaemonSet"): daemonset,
    ("apps", "ReplicaSet"): replicaset,
    ("batch", "Job"): job,
    ("", "Pod"): pod,
    ("", "PersistentVolumeClaim"): persistentvolumeclaim,
    ("", "Service"): service,
    ("", "Namespace"): namespace,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): customresourcedefinition,
}


def by_kind(obj: Obj) -> Status:
    return BUILT_IN.get(group_kind(obj), generic)(obj)
