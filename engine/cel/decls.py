"""The CEL declaration types of an OpenAPI schema with their size bounds (pure).

Follows k8s.io/apiserver pkg/cel/common/schemas.go `SchemaDeclType`: each type has the most elements it can
hold (`maxItems`, `maxProperties`, `maxLength` times 4, or what fits in a 3 MiB request) and the least bytes it takes
serialized, which the cost estimator and the cardinality of rules under unbounded lists use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_REQUEST_BYTES", "Decl", "decl_of", "simple"]

MAX_REQUEST_BYTES = 3 * 1024 * 1024
MIN_STRING, MIN_BOOL, MIN_NUMBER = 2, 4, 1
MAX_DURATION, MAX_DATETIME, DATE, MIN_DURATION, MIN_DATETIME = 32, 32, 12, 3, 21
NAME_MAX_LENGTH = 253  # DNS1123SubdomainMaxLength


@dataclass(frozen=True)
class Decl:
    """kind: list, map, object, string, bytes, int, uint, double, bool, null, dyn, duration, timestamp, or a
    library type (quantity, url, ip, cidr, semver)."""

    kind: str
    max_elements: int = 0
    min_size: int = 1
    fields: Mapping[str, Decl] = field(default_factory=dict)
    elem: Decl | None = None
    key: Decl | None = None


def simple(kind: str, elem: Decl | None = None) -> Decl:
    """A type with no size bound of its own (a literal's, a function's result)."""
    key = STRING if kind == "map" else None
    return Decl(kind, elem=elem, key=key)


STRING = Decl("string", min_size=MIN_STRING)


def _zero_if_negative(value: Any) -> int:
    return max(int(value), 0)


def _max_string(node: Mapping[str, Any]) -> int:
    if node.get("x-kubernetes-int-or-string"):
        return MAX_REQUEST_BYTES - 2
    return {"duration": MAX_DURATION, "date": DATE, "date-time": MAX_DATETIME}.get(str(node.get("format")),
                                                                                  MAX_REQUEST_BYTES - 2)


def decl_of(node: Any, root: bool = False) -> Decl | None:
    """SchemaDeclType: None where the schema gives CEL no type."""
    if not isinstance(node, Mapping):
        return None
    if node.get("x-kubernetes-int-or-string"):
        bound = _zero_if_negative(node["maxLength"]) * 4 if "maxLength" in node else _max_string(node)
        return Decl("dyn", bound, 1)
    if root:
        node = _resource_root(node)
    kind = node.get("type")
    if kind == "array":
        items = decl_of(node.get("items"), _embedded(node.get("items")))
        if items is None:
            return None
        most = _zero_if_negative(node["maxItems"]) if "maxItems" in node else \
            (MAX_REQUEST_BYTES - 2) // (items.min_size + 1)
        return Decl("list", most, 2, elem=items)
    if kind == "object":
        extra = node.get("additionalProperties")
        if isinstance(extra, Mapping):
            values = decl_of(extra, _embedded(extra))
            if values is None:
                return None
            most = _zero_if_negative(node["maxProperties"]) if "maxProperties" in node else \
                (MAX_REQUEST_BYTES - 2) // (values.min_size + 6)
            return Decl("map", most, 2, elem=values, key=STRING)
        if extra is not None and extra is not False:
            return None
        fields, size, required = {}, 2, set(node.get("required") or ())
        for name, prop in (node.get("properties") or {}).items():
            typed = decl_of(prop, _embedded(prop))
            if typed is None:
                continue
            fields[name] = typed
            if name in required and isinstance(prop, Mapping) and "default" not in prop:
                size += len(name.encode()) + typed.min_size + 4
        return Decl("object", 0, size, fields=fields)
    if kind == "string":
        fmt = node.get("format")
        if fmt == "byte":
            bound = _zero_if_negative(node["maxLength"]) if "maxLength" in node else _max_string(node)
            return Decl("bytes", bound, MIN_STRING)
        if fmt in ("duration", "date", "date-time"):
            least = {"duration": MIN_DURATION, "date": DATE, "date-time": MIN_DATETIME}[str(fmt)]
            return Decl("duration" if fmt == "duration" else "timestamp", _max_string(node), least)
        if "maxLength" in node:
            bound = _zero_if_negative(node["maxLength"]) * 4
        elif node.get("enum"):
            bound = max((len(v.encode()) for v in node["enum"] if isinstance(v, str)), default=0)
        else:
            bound = _max_string(node)
        return Decl("string", bound, MIN_STRING)
    return {"boolean": Decl("bool", 0, MIN_BOOL), "number": Decl("double", 0, MIN_NUMBER),
            "integer": Decl("int", 0, MIN_NUMBER)}.get(str(kind))


def _typed(node: Any, kind: str) -> bool:
    return isinstance(node, Mapping) and node.get("type") == kind


def _resource_root(node: Mapping[str, Any]) -> Mapping[str, Any]:
    """apiextensions schema/cel/model WithTypeAndObjectMeta: kind, apiVersion, and metadata's name and generateName
    with their length capped at 253 and 252."""
    properties = node.get("properties") or {}
    found = properties.get("metadata")
    metadata: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    inner = metadata.get("properties")
    meta: Mapping[str, Any] = inner if isinstance(inner, Mapping) else {}
    if _typed(properties.get("kind"), "string") and _typed(properties.get("apiVersion"), "string") and \
            _typed(metadata, "object") and meta and _typed(meta.get("name"), "string") and \
            _typed(meta.get("generateName"), "string"):
        return node

    def capped(existing: Any, most: int) -> dict[str, Any]:
        if isinstance(existing, Mapping) and isinstance(existing.get("maxLength"), int):
            most = min(most, existing["maxLength"])
        return {"type": "string", "maxLength": most}

    return {**node, "properties": {**properties, "kind": {"type": "string"}, "apiVersion": {"type": "string"},
                                   "metadata": {"type": "object", "properties": {
                                       "name": capped(meta.get("name"), NAME_MAX_LENGTH),
                                       "generateName": capped(meta.get("generateName"), NAME_MAX_LENGTH - 1)}}}}


def _embedded(node: Any) -> bool:
    return isinstance(node, Mapping) and bool(node.get("x-kubernetes-embedded-resource"))
