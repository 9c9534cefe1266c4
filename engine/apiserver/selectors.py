"""Label and field selectors: parsing (400 on bad input) and matching."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.apiserver import eventsv1
from engine.apiserver.objects import JsonDict, get_path
from engine.apiserver.resources import ResourceType
from engine.apiserver.status import bad_request

_KEY = r"[A-Za-z0-9](?:[-A-Za-z0-9_./]*[A-Za-z0-9])?"
_VALUE = r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_SET_RE = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s+\(([^)]*)\)\s*$")
_OP_RE = re.compile(rf"^\s*({_KEY})\s*(==|!=|=|>|<)\s*({_VALUE})\s*$")
_EXISTS_RE = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # in, notin, exists, !exists, gt, lt
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, Any]) -> bool:
        present = self.key in labels
        value = str(labels.get(self.key, ""))
        if self.op == "exists":
            return present
        if self.op == "!exists":
            return not present
        if self.op == "in":
            return present and value in self.values
        if self.op == "notin":
            return not present or value not in self.values
        try:
            number, bound = int(value), int(self.values[0])
        except ValueError:
            return False
        return present and (number > bound if self.op == "gt" else number < bound)


@dataclass(frozen=True)
class LabelSelector:
    requirements: tuple[Requirement, ...] = ()

    def matches(self, obj: JsonDict) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(r.matches(labels) for r in self.requirements)

    def __bool__(self) -> bool:
        return bool(self.requirements)


def split_terms(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    terms, depth, current = [], 0, ""
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += ch
    terms.append(current)
    return [t for t in terms if t.strip()]


def parse_labels(text: str | None) -> LabelSelector:
    if not text or not text.strip():
        return LabelSelector()
    return LabelSelector(tuple(parse_requirement(term) for term in split_terms(text)))


def parse_requirement(term: str) -> Requirement:
    if m := _SET_RE.match(term):
        values = tuple(v.strip() for v in m[3].split(",") if v.strip())
        return Requirement(m[1], m[2], values)
    if m := _OP_RE.match(term):
        op = {"=": "in", "==": "in", "!=": "notin", ">": "gt", "<": "lt"}[m[2]]
        return Requirement(m[1], op, (m[3],))
    if m := _EXISTS_RE.match(term):
        return Requirement(m[2], "!exists" if m[1] else "exists")
    raise bad_request(f"unable to parse requirement: found '{term.strip()}', expected: valid label selector")


def selector_from_label_selector(spec: Mapping[str, Any] | None) -> LabelSelector:
    """A metav1.LabelSelector (matchLabels, matchExpressions) as requirements."""
    if not spec:
        return LabelSelector()
    reqs = [Requirement(str(k), "in", (str(v),)) for k, v in sorted((spec.get("matchLabels") or {}).items())]
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!exists"}
    for expr in spec.get("matchExpressions") or []:
        op = ops.get(str(expr.get("operator")))
        if op:
            reqs.append(Requirement(str(expr.get("key")), op, tuple(str(v) for v in expr.get("values") or ())))
    return LabelSelector(tuple(reqs))


def format_label_selector(spec: Mapping[str, Any] | None) -> str:
    """The string form kubectl and /scale show (`app=web,tier in (a,b)`)."""
    parts = []
    for r in selector_from_label_selector(spec).requirements:
        if r.op == "in" and len(r.values) == 1:
            parts.append(f"{r.key}={r.values[0]}")
        elif r.op in ("in", "notin"):
            parts.append(f"{r.key} {r.op} ({','.join(sorted(r.values))})")
        else:
            parts.append(r.key if r.op == "exists" else f"!{r.key}")
    return ",".join(parts)


# field selectors

_COMMON_FIELDS = ("metadata.name", "metadata.namespace")
_FIELDS: Mapping[str, tuple[str, ...]] = {
    "/pods": ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
              "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName"),
    "/nodes": ("spec.unschedulable",),
    "/namespaces": ("status.phase",),
    "/secrets": ("type",),
    "/events": ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
                "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
                "reason", "reportingComponent", "source", "type"),
    "events.k8s.io/events": tuple(eventsv1.FIELD_SELECTORS),
    "/persistentvolumeclaims": (),
    "/replicationcontrollers": ("status.replicas",),
    "batch/jobs": ("status.successful",),
}


@dataclass(frozen=True)
class FieldTerm:
    path: str
    value: str
    equal: bool


@dataclass(frozen=True)
class FieldSelector:
    terms: tuple[FieldTerm, ...] = ()

    def matches(self, obj: JsonDict) -> bool:
        return all((field_value(obj, t.path) == t.value) == t.equal for t in self.terms)

    def single_name(self) -> str | None:
        """The name when the selector pins `metadata.name=X` (a fast path for lookups)."""
        names = [t.value for t in self.terms if t.path == "metadata.name" and t.equal]
        return names[0] if names else None

    def __bool__(self) -> bool:
        return bool(self.terms)


def supported_fields(rt: ResourceType) -> tuple[str, ...]:
    extra = rt.custom.selectable_fields if rt.custom else _FIELDS.get(rt.own_key, ())
    return _COMMON_FIELDS + tuple(extra)


def parse_fields(text: str | None, rt: ResourceType) -> FieldSelector:
    if not text or not text.strip():
        return FieldSelector()
    terms = []
    allowed = supported_fields(rt)
    for term in split_unescaped(text, ","):
        m = re.match(r"^\s*([^!=\s]+)\s*(==|!=|=)\s*(.*?)\s*$", term)
        if not m:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{term}'")
        path = m[1]
        if path not in allowed:
            raise bad_request(unsupported_field(path, allowed))
        if eventsv1.is_events_v1(rt):  # evaluated on the stored, core/v1 form
            path = eventsv1.FIELD_SELECTORS[path]
        terms.append(FieldTerm(path, unescape(m[3]), m[2] != "!="))
    return FieldSelector(tuple(terms))


def unsupported_field(path: str, allowed: tuple[str, ...]) -> str:
    """The real server's words: kinds with field selectors of their own have a conversion function that says
    "not supported"; the others fall back to the metadata-only default, which lists what it knows."""
    if allowed == _COMMON_FIELDS:
        return f'"{path}" is not a known field selector: only ' + ", ".join(f'"{f}"' for f in _COMMON_FIELDS)
    return f"field label not supported: {path}"


def split_unescaped(text: str, sep: str) -> list[str]:
    parts, current, escaped = [], "", False
    for ch in text:
        if escaped:
            current += "\\" + ch
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == sep:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p for p in parts if p.strip()]


def unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def field_value(obj: JsonDict, path: str) -> str:
    if path == "source":
        value = get_path(obj, ["source", "component"]) or obj.get("reportingComponent")
    elif path == "status.podIPs":
        value = get_path(obj, ["status", "podIP"])
    else:
        value = get_path(obj, path.split("."))
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


Matcher = Callable[[JsonDict], bool]


def matcher(labels: LabelSelector, fields: FieldSelector) -> Matcher:
    if not labels and not fields:
        return lambda _obj: True
    return lambda obj: labels.matches(obj) and fields.matches(obj)


def parse_both(query: Mapping[str, str], rt: ResourceType) -> tuple[LabelSelector, FieldSelector]:
    return parse_labels(query.get("labelSelector")), parse_fields(query.get("fieldSelector"), rt)
