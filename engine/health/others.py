"""Health of PVCs, Services, CRDs and Namespaces, and of any other object by its kstatus conditions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.health.objects import (
    EMPTY,
    Obj,
    as_map,
    condition_current,
    conditions_of,
    explain,
    is_true,
    spec_of,
    status_of,
)
from engine.health.verdicts import Status, failed, healthy, progressing, stale


def persistentvolumeclaim(obj: Obj) -> Status:
    phase = status_of(obj).get("phase") or "Pending"
    if phase == "Bound":
        return healthy(obj, "Bound")
    if phase == "Lost":
        return failed(obj, "Lost: its volume no longer exists")
    return progressing(obj, f"{phase}, waiting to be bound")


def service(obj: Obj) -> Status:
    kind = spec_of(obj).get("type") or "ClusterIP"
    if kind != "LoadBalancer":
        return healthy(obj, kind)
    ingress = as_map(status_of(obj).get("loadBalancer")).get("ingress")
    if not isinstance(ingress, list) or not ingress:
        return progressing(obj, "waiting for a load balancer address")
    first = as_map(ingress[0])
    return healthy(obj, f"load balancer at {first.get('ip') or first.get('hostname') or '?'}")


def customresourcedefinition(obj: Obj) -> Status:
    conditions = conditions_of(obj)
    names = conditions.get("NamesAccepted", EMPTY)
    if names.get("status") == "False":
        return failed(obj, explain(names, "names not accepted"))
    if is_true(conditions, "Established"):
        return healthy(obj, "Established")
    reason = explain(conditions.get("Established", EMPTY))
    return progressing(obj, f"not established yet ({reason})" if reason else "not established yet")


def namespace(obj: Obj) -> Status:
    phase = status_of(obj).get("phase")
    if phase == "Active":
        return healthy(obj, "Active")
    return progressing(obj, str(phase) if phase else "no phase yet")


def generic(obj: Obj) -> Status:
    """kstatus conventions for any other object: observedGeneration, then Stalled/Failed, Reconciling, Ready."""
    if waiting := stale(obj, strict=False):
        return waiting
    conditions = conditions_of(obj)
    for kind in ("Stalled", "Failed"):
        if is_true(conditions, kind) and condition_current(obj, conditions[kind]):
            return failed(obj, explain(conditions[kind], kind))
    if is_true(conditions, "Reconciling"):
        return progressing(obj, explain(conditions["Reconciling"], "Reconciling"))
    for kind in ("Ready", "Available"):
        if kind in conditions:
            return readiness(obj, kind, conditions[kind])
    return healthy(obj, "exists")


def readiness(obj: Obj, kind: str, condition: Mapping[str, Any]) -> Status:
    state = condition.get("status") or "Unknown"
    if state != "True":
        why = explain(condition)
        return progressing(obj, f"{kind}={state}: {why}" if why else f"{kind}={state}")
    if not condition_current(obj, condition):
        return progressing(obj, f"{kind} condition is from generation {condition['observedGeneration']}")
    return healthy(obj, f"{kind}")
