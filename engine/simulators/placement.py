"""Which nodes a pod fits (node selector, required node affinity, taints) and the scheduler's message when none."""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from engine.simulators import conditions

JsonDict = dict[str, Any]

UNSCHEDULABLE = "node(s) were unschedulable"
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
NOT_READY_TAINT = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}


def labels_of(node: JsonDict) -> dict[str, str]:
    return {str(k): str(v) for k, v in ((node.get("metadata") or {}).get("labels") or {}).items()}


def name_of(node: JsonDict) -> str:
    return str((node.get("metadata") or {}).get("name") or "")


def expression_matches(expr: Mapping[str, Any], value: str | None) -> bool:
    """One NodeSelectorRequirement against a label (or field) value; None when the node lacks it."""
    op, values = expr.get("operator"), [str(v) for v in expr.get("values") or []]
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return value is None or value not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt") and value is not None and len(values) == 1:
        try:
            left, right = int(value), int(values[0])
        except ValueError:
            return False
        return left > right if op == "Gt" else left < right
    return False


def term_matches(term: Mapping[str, Any], node: JsonDict) -> bool:
    exprs, fields = term.get("matchExpressions") or [], term.get("matchFields") or []
    if not exprs and not fields:
        return False
    labels = labels_of(node)
    return all(expression_matches(e, labels.get(str(e.get("key")))) for e in exprs) and all(
        expression_matches(f, name_of(node) if f.get("key") == "metadata.name" else None) for f in fields)


def affinity_matches(spec: Mapping[str, Any], node: JsonDict) -> bool:
    """spec.nodeSelector (every label) and required node affinity (any term)."""
    labels = labels_of(node)
    if any(labels.get(str(k)) != str(v) for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))
    if not required:
        return True
    return any(term_matches(t, node) for t in required.get("nodeSelectorTerms") or [])


def tolerates(tolerations: Sequence[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    for tol in tolerations:
        if tol.get("effect") and tol.get("effect") != taint.get("effect"):
            continue
        if tol.get("operator") == "Exists":
            if not tol.get("key") or tol.get("key") == taint.get("key"):
                return True
        elif tol.get("key") == taint.get("key") and str(tol.get("value") or "") == str(taint.get("value") or ""):
            return True
    return False


def blocking_taint(spec: Mapping[str, Any], node: JsonDict) -> JsonDict | None:
    """The first NoSchedule/NoExecute taint the pod does not tolerate (a node not Ready counts as tainted)."""
    taints = list((node.get("spec") or {}).get("taints") or [])
    if not conditions.is_true((node.get("status") or {}).get("conditions") or [], "Ready"):
        taints.append(NOT_READY_TAINT)
    tolerations = spec.get("tolerations") or []
    return next((t for t in taints if t.get("effect") in ("NoSchedule", "NoExecute")
                 and not tolerates(tolerations, t)), None)


def misfit(spec: Mapping[str, Any], node: JsonDict) -> str | None:
    """Why the pod cannot go to this node (the scheduler's wording), or None if it fits."""
    if (node.get("spec") or {}).get("unschedulable") and not tolerates(spec.get("tolerations") or [],
                                                                      UNSCHEDULABLE_TAINT):
        return UNSCHEDULABLE
    taint = blocking_taint(spec, node)
    if taint is not None:
        return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value') or ''}}}"
    if not affinity_matches(spec, node):
        return AFFINITY
    return None


def fitting(spec: Mapping[str, Any], nodes: Sequence[JsonDict]) -> list[JsonDict]:
    return [n for n in nodes if misfit(spec, n) is None]


def choose(spec: Mapping[str, Any], nodes: Sequence[JsonDict], pod_name: str) -> JsonDict | None:
    """A fitting node, spread by a stable hash of the pod's name; None when none fits."""
    fits = sorted(fitting(spec, nodes), key=name_of)
    return fits[zlib.crc32(pod_name.encode()) % len(fits)] if fits else None


def unschedulable_message(spec: Mapping[str, Any], nodes: Sequence[JsonDict]) -> str:
    """`0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: ...`."""
    if not nodes:
        return "no nodes available to schedule pods"
    reasons = Counter(misfit(spec, n) or "" for n in nodes)
    parts = sorted(f"{count} {reason}" for reason, count in reasons.items() if reason)
    total = len(nodes)
    return (f"0/{total} nodes are available: {', '.join(parts)}. preemption: 0/{total} nodes are available: "
            f"{total} Preemption is not helpful for scheduling.")
