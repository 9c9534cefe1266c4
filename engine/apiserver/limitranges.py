"""The LimitRanger admission of pods (pure): a created pod's containers get the `default` limits and
`defaultRequest` requests of the namespace's Container LimitRanges (and the annotation saying so), then each
container must keep within their `min` and `max` (k8s.io/kubernetes plugin/pkg/admission/limitranger).
Pod and PersistentVolumeClaim items are not enforced."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine import quantity
from engine.apiserver.objects import JsonDict, meta
from engine.quantity import QuantityError

__all__ = ["ANNOTATION", "LimitViolation", "apply_defaults", "check"]

LIMIT_RANGES = "/limitranges"
ANNOTATION = "kubernetes.io/limit-ranger"


class LimitViolation(Exception):
    """A container outside a LimitRange (the plugin's words; 403 Forbidden)."""


def _container_items(ranges: Iterable[JsonDict]) -> list[Mapping[str, Any]]:
    return [item for r in ranges for item in (r.get("spec") or {}).get("limits") or []
            if isinstance(item, dict) and item.get("type") == "Container"]


def _containers(pod: JsonDict) -> list[tuple[str, JsonDict]]:
    spec = pod.get("spec") or {}
    return [*(("container", c) for c in spec.get("containers") or [] if isinstance(c, dict)),
            *(("init container", c) for c in spec.get("initContainers") or [] if isinstance(c, dict))]


def apply_defaults(pod: JsonDict, ranges: Iterable[JsonDict]) -> None:
    """Fill in missing limits and requests from the LimitRanges and note what was set (mergePodResourceRequirements)."""
    notes: list[str] = []
    for item in _container_items(ranges):
        if not item.get("default") and not item.get("defaultRequest"):
            continue
        for what, container in _containers(pod):
            resources = container.setdefault("resources", {})
            for field, word in (("defaultRequest", "requests"), ("default", "limits")):
                present = resources.setdefault(word, {})
                added = sorted(k for k in (item.get(field) or {}) if k not in present)
                present.update({k: item[field][k] for k in added})
                if not present:
                    resources.pop(word)
                if added:
                    notes.append(f"{', '.join(added)} {'request' if word == 'requests' else 'limit'} for {what} "
                                 f"{container.get('name', '')}")
    if notes:
        annotations = meta(pod).setdefault("annotations", {})
        annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)


def check(pod: JsonDict, ranges: Iterable[JsonDict]) -> None:
    """Each container within every Container item's min and max (PodValidateLimitFunc); raises LimitViolation."""
    errors: list[str] = []
    for item in _container_items(ranges):
        for _, container in _containers(pod):
            resources = container.get("resources") or {}
            requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
            for name, bound in sorted((item.get("min") or {}).items()):
                errors += _bound_errors("minimum", name, str(bound), requests, limits)
            for name, bound in sorted((item.get("max") or {}).items()):
                errors += _bound_errors("maximum", name, str(bound), limits, requests)
    if errors:
        raise LimitViolation(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")


def _bound_errors(kind: str, name: str, bound: str, first: Mapping[str, Any], second: Mapping[str, Any]) -> list[str]:
    """minConstraint (first = requests) and maxConstraint (first = limits)."""
    head = f"{kind} {name} usage per Container is {bound}"
    first_word, second_word = ("request", "limit") if kind == "minimum" else ("limit", "request")
    if name not in first:
        return [f"{head}.  No {first_word} is specified"]
    for word, values in ((first_word, first), (second_word, second)):
        if name in values and _beyond(kind, str(values[name]), bound):
            return [f"{head}, but {word} is {values[name]}"]
    return []


def _beyond(kind: str, value: str, bound: str) -> bool:
    try:
        order = quantity.parse(value).compare(quantity.parse(bound))
    except QuantityError:
        return False
    return order < 0 if kind == "minimum" else order > 0
