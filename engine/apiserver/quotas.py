"""ResourceQuota: what an object uses of a quota, the admission that refuses a write beyond `status.hard`, the
validation of `spec.hard`, and the usage the quota controller writes to `status` (pure).

Follows k8s.io/kubernetes pkg/quota/v1/evaluator/core (pods, services, claims, object counts),
plugin/pkg/admission/resourcequota (admission reads `status.hard`, so a quota the controller has not filled in
yet refuses nothing) and pkg/apis/core/validation `ValidateResourceQuota`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from engine import quantity
from engine.apiserver.objects import JsonDict, get_path, name_of
from engine.apiserver.status import ErrorType, FieldError
from engine.quantity import Format, Quantity, QuantityError

__all__ = ["Charge", "admit", "hard_errors", "keys_for", "status_of", "usage"]

Usage = dict[str, Quantity]
QUOTAS = "/resourcequotas"
PODS, SERVICES, CLAIMS = "/pods", "/services", "/persistentvolumeclaims"
LEGACY_COUNTS = ("configmaps", "persistentvolumeclaims", "pods", "replicationcontrollers", "resourcequotas",
                 "secrets", "services")
COMPUTE = ("cpu", "memory", "ephemeral-storage")
STORAGE_CLASS = ".storageclass.storage.k8s.io/"
# Each container must declare these when a quota limits them (pkg/quota/v1/evaluator/core/pods.go validationSet).
DECLARED = {"cpu": ("requests", "cpu"), "memory": ("requests", "memory"), "requests.cpu": ("requests", "cpu"),
            "requests.memory": ("requests", "memory"), "limits.cpu": ("limits", "cpu"),
            "limits.memory": ("limits", "memory")}
STANDARD = frozenset({*COMPUTE, *LEGACY_COUNTS, "requests.cpu", "requests.memory", "requests.storage",
                      "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
                      "services.nodeports", "services.loadbalancers"})
INTEGER = frozenset({*LEGACY_COUNTS, "services.nodeports", "services.loadbalancers"})
ONE = Quantity(Fraction(1), Format.DECIMAL_SI)
ZERO = Quantity(Fraction(0), Format.DECIMAL_SI)


def _qty(raw: Any) -> Quantity | None:
    try:
        return quantity.parse(str(raw))
    except QuantityError:
        return None


def _add(usage: Usage, name: str, amount: Quantity) -> None:
    usage[name] = usage[name].add(amount) if name in usage else amount


# usage of one object ---------------------------------------------------------------------------------------------


def count_name(key: str) -> str:
    """`count/<resource>[.<group>]` of a storage key (`/pods`, `apps/deployments`)."""
    group, _, plural = key.partition("/")
    return f"count/{plural}.{group}" if group else f"count/{plural}"


def usage(key: str, obj: JsonDict) -> Usage:
    """What one stored object of this resource uses of any quota."""
    if key == PODS and get_path(obj, ["status", "phase"]) in ("Succeeded", "Failed"):
        return {}
    found: Usage = {count_name(key): ONE}
    plural = key.partition("/")[2]
    if key.startswith("/") and plural in LEGACY_COUNTS:
        found[plural] = ONE
    extra = {PODS: _pod_usage, SERVICES: _service_usage, CLAIMS: _claim_usage}.get(key)
    if extra is not None:
        found.update(extra(obj))
    return found


def _pod_totals(spec: Mapping[str, Any], kind: str) -> Usage:
    """PodRequests/PodLimits: the containers' sum, or the largest init container's when that is larger."""
    total: Usage = {}
    for container in spec.get("containers") or []:
        for name, raw in (get_path(container, ["resources", kind]) or {}).items():
            amount = _qty(raw)
            if amount is not None:
                _add(total, name, amount)
    for container in spec.get("initContainers") or []:
        for name, raw in (get_path(container, ["resources", kind]) or {}).items():
            amount = _qty(raw)
            if amount is not None and (name not in total or amount.compare(total[name]) > 0):
                total[name] = amount
    return total


def _pod_usage(pod: JsonDict) -> Usage:
    spec = pod.get("spec") or {}
    found: Usage = {}
    for name, amount in _pod_totals(spec, "requests").items():
        found[f"requests.{name}"] = amount
        if name in COMPUTE or name.startswith("hugepages-"):
            found[name] = amount
    for name, amount in _pod_totals(spec, "limits").items():
        if name in COMPUTE:
            found[f"limits.{name}"] = amount
    return found


def _service_usage(service: JsonDict) -> Usage:
    spec = service.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    found: Usage = {}
    if kind == "LoadBalancer":
        found["services.loadbalancers"] = ONE
    if kind in ("NodePort", "LoadBalancer") and spec.get("allocateLoadBalancerNodePorts") is not False:
        found["services.nodeports"] = Quantity(Fraction(len(spec.get("ports") or [])), Format.DECIMAL_SI)
    return found


def _claim_usage(claim: JsonDict) -> Usage:
    found: Usage = {}
    storage = _qty(get_path(claim, ["spec", "resources", "requests", "storage"]) or "")
    if storage is not None:
        found["requests.storage"] = storage
    storage_class = get_path(claim, ["spec", "storageClassName"])
    if storage_class:
        found[f"{storage_class}{STORAGE_CLASS}persistentvolumeclaims"] = ONE
        if storage is not None:
            found[f"{storage_class}{STORAGE_CLASS}requests.storage"] = storage
    return found


def keys_for(name: str) -> tuple[str, ...]:
    """The storage keys whose objects count towards a quota's resource name."""
    if name.startswith("count/"):
        plural, _, group = name.removeprefix("count/").partition(".")
        return (f"{group}/{plural}",)
    if name in LEGACY_COUNTS:
        return (f"/{name}",)
    if name.startswith("services."):
        return (SERVICES,)
    if name == "requests.storage" or STORAGE_CLASS in name:
        return (CLAIMS,)
    if name in COMPUTE or name.startswith(("requests.", "limits.", "hugepages-")):
        return (PODS,)
    return ()


# status (the quota controller) -----------------------------------------------------------------------------------


def status_of(quota: JsonDict, objects: Mapping[str, Sequence[JsonDict]]) -> JsonDict:
    """The status the controller writes: `hard` from the spec, `used` summed over `objects` (by storage key) for
    every hard resource some resource counts towards."""
    hard = dict(sorted((get_path(quota, ["spec", "hard"]) or {}).items()))
    used: Usage = {}
    for name in hard:
        for key in keys_for(name):
            used.setdefault(name, ZERO)
            for obj in objects.get(key, ()):
                if matches(quota, key, obj):
                    amount = usage(key, obj).get(name)
                    if amount is not None:
                        _add(used, name, amount)
    return {"hard": hard, "used": {name: str(amount) for name, amount in sorted(used.items())}}


def matches(quota: JsonDict, key: str, obj: JsonDict) -> bool:
    """Whether the quota's scopes select the object (only pods are scoped; a scopeSelector selects none here)."""
    scopes = list(get_path(quota, ["spec", "scopes"]) or [])
    selector = get_path(quota, ["spec", "scopeSelector"])
    if not scopes and not selector:
        return True
    if key != PODS or selector:
        return False
    spec = obj.get("spec") or {}
    best_effort = not any(get_path(c, ["resources", "requests"]) or get_path(c, ["resources", "limits"])
                          for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])])
    terminating = spec.get("activeDeadlineSeconds") is not None
    known = {"BestEffort": best_effort, "NotBestEffort": not best_effort, "Terminating": terminating,
             "NotTerminating": not terminating}
    return all(known.get(scope, False) for scope in scopes)


# admission -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Charge:
    """A quota's new `status.used` once the admitted write is stored."""

    name: str
    used: dict[str, str]


class QuotaRefusal(Exception):
    """The write is refused; the message is the admission plugin's (403 Forbidden)."""


def _pretty(usage_: Mapping[str, Any]) -> str:
    return ",".join(f"{name}={usage_[name]}" for name in sorted(usage_))


def admit(key: str, new: JsonDict, old: JsonDict | None, quotas: Iterable[JsonDict]) -> list[Charge]:
    """The quotas' new usage if the write fits every quota (in name order); raises QuotaRefusal otherwise."""
    delta = usage(key, new)
    if old is not None:
        before = usage(key, old)
        delta = {n: q.sub(before.get(n, ZERO)) for n, q in delta.items()}
    charges = []
    for quota in sorted(quotas, key=name_of):
        hard = {n: q for n, raw in (get_path(quota, ["status", "hard"]) or {}).items() if (q := _qty(raw))}
        restricted = sorted(n for n in hard if key in keys_for(n))
        if not restricted or not matches(quota, key, new):
            continue
        if key == PODS:
            _check_declared(name_of(quota), new, restricted)
        used = {n: q for n, raw in (get_path(quota, ["status", "used"]) or {}).items() if (q := _qty(raw))}
        unknown = [n for n in restricted if n not in used]
        if unknown:
            raise QuotaRefusal(f"status unknown for quota: {name_of(quota)}, resources: {','.join(unknown)}")
        requested = {n: delta[n] for n in restricted if n in delta and delta[n].sign != 0}
        if not requested:
            continue
        exceeded = sorted(n for n, q in requested.items() if used[n].add(q).compare(hard[n]) > 0)
        if exceeded:
            raise QuotaRefusal(
                f"exceeded quota: {name_of(quota)}, requested: {_pretty({n: requested[n] for n in exceeded})}, "
                f"used: {_pretty({n: used[n] for n in exceeded})}, limited: {_pretty({n: hard[n] for n in exceeded})}")
        new_used = {**{n: str(q) for n, q in used.items()}, **{n: str(used[n].add(q)) for n, q in requested.items()}}
        charges.append(Charge(name_of(quota), new_used))
    return charges


def _check_declared(quota_name: str, pod: JsonDict, restricted: Sequence[str]) -> None:
    """A quota on cpu or memory needs every container to declare it (pods.go Constraints)."""
    spec = pod.get("spec") or {}
    missing: dict[str, list[str]] = {}
    for resource in restricted:
        if resource not in DECLARED:
            continue
        kind, name = DECLARED[resource]
        for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
            if name not in (get_path(container, ["resources", kind]) or {}):
                missing.setdefault(resource, []).append(str(container.get("name") or ""))
    if missing:
        listed = "; ".join(f"{r} for: {','.join(sorted(set(names)))}" for r, names in sorted(missing.items()))
        raise QuotaRefusal(f"failed quota: {quota_name}: must specify {listed}")


# validation ------------------------------------------------------------------------------------------------------


def hard_errors(quota: JsonDict) -> list[FieldError]:
    """ValidateResourceQuota's checks of `spec.hard` (names, and values non-negative, integers where counted)."""
    errors = []
    for name, raw in (get_path(quota, ["spec", "hard"]) or {}).items():
        path = f"spec.hard[{name}]"
        if "/" not in name and not _standard(name):
            errors += [FieldError(ErrorType.INVALID, path, name, "must be a standard resource type or fully qualified"),
                       FieldError(ErrorType.INVALID, path, name, "must be a standard resource for quota")]
        amount = _qty(raw)
        if amount is None:
            continue
        if amount.sign < 0:
            errors.append(FieldError(ErrorType.INVALID, path, str(raw), "must be greater than or equal to 0"))
        elif (name in INTEGER or name.startswith("count/")) and amount.value.denominator != 1:
            errors.append(FieldError(ErrorType.INVALID, path, str(raw), "must be an integer"))
    return errors


def _standard(name: str) -> bool:
    return name in STANDARD or name.startswith(("hugepages-", "requests.hugepages-"))
