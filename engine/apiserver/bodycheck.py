"""Whether a built-in object's body has anything for the decode walks of `structural` to report.

`structural.type_mismatches` and `structural.prune` build a path string for every value they visit, for their
messages; almost every body has nothing to report. These checks follow the same rules over schema nodes resolved
once (the built-in definitions never change) and build no paths: a write runs the walk of `structural` only when
its check finds something, and so reports exactly what it did before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.apiserver.structural import (
    _EMBEDDED_KEYS,
    OBJECT_META,
    NodeMemo,
    Schema,
    SchemaView,
    is_int_or_string,
    json_type,
    type_matches,
)
from engine.apiserver.unchanged import Unchanged

__all__ = ["has_mismatch", "has_unknown"]

_META_REF: Schema = {"$ref": f"#/$defs/{OBJECT_META}"}
_STRING: Schema = {"type": "string"}
EMBEDDED = "x-kubernetes-embedded-resource"


class _Resolved:
    """What the two walks read of one schema node, resolved through its `$ref`."""

    __slots__ = ("embedded", "expected", "extra", "int_or_string", "items", "items_embedded", "keeps_unknown",
                 "properties")

    def __init__(self, view: SchemaView, raw: Schema) -> None:
        node = view.resolve(raw)
        self.expected = json_type(node)
        self.int_or_string = is_int_or_string(node)
        self.properties: Mapping[str, Schema] = node.get("properties") or {}
        extra = node.get("additionalProperties")
        self.extra: Schema | None = extra if isinstance(extra, Mapping) else None
        items = node.get("items")
        self.items: Schema | None = items if isinstance(items, Mapping) else None
        self.items_embedded = bool(self.items is not None and self.items.get(EMBEDDED))
        self.embedded = bool(node.get(EMBEDDED))
        open_object = not self.properties and extra is None and self.expected in ("object", None)
        self.keeps_unknown = bool(node.get("x-kubernetes-preserve-unknown-fields")) or extra is True or open_object


_RESOLVED: dict[int, NodeMemo[_Resolved]] = {}  # per set of definitions: what each schema node resolves to


def _of(view: SchemaView, raw: Schema) -> _Resolved:
    memo = _RESOLVED.get(id(view.definitions))
    if memo is None:
        memo = _RESOLVED[id(view.definitions)] = NodeMemo(lambda node: _Resolved(view, node))
    return memo(raw)


def has_mismatch(view: SchemaView, obj: Any, unchanged: Unchanged) -> bool:
    """Whether `structural.type_mismatches` finds a value of the wrong JSON type (a built-in view)."""
    return _mismatch(view, view.root, obj, unchanged)


def _mismatch(view: SchemaView, raw: Schema, value: Any, unchanged: Unchanged) -> bool:
    if value is None or value in unchanged:
        return False
    node = _of(view, raw)
    if node.int_or_string:
        return False
    if node.expected and not type_matches(node.expected, value):
        return True
    if isinstance(value, dict):
        properties, extra = node.properties, node.extra
        return any((child := properties.get(key) or extra) is not None and _mismatch(view, child, item, unchanged)
                   for key, item in value.items())
    if isinstance(value, list) and node.items is not None:
        items = node.items
        return any(_mismatch(view, items, item, unchanged) for item in value)
    return False


def has_unknown(view: SchemaView, obj: Any, unchanged: Unchanged) -> bool:
    """Whether `structural.prune` would drop a field the schema does not declare (a built-in view)."""
    return _unknown(view, view.root, obj, False, unchanged)


def _unknown(view: SchemaView, raw: Schema, value: Any, embedded: bool, unchanged: Unchanged) -> bool:
    if value in unchanged:
        return False
    node = _of(view, raw)
    if isinstance(value, list):
        items = node.items
        return items is not None and any(_unknown(view, items, item, node.items_embedded, unchanged)
                                         for item in value)
    if not isinstance(value, dict):
        return False
    for key, item in value.items():
        child = node.properties.get(key)
        if embedded and child is None and key in _EMBEDDED_KEYS:
            child = _META_REF if key == "metadata" else _STRING
        if child is None:
            child = node.extra
        if child is not None:
            if _unknown(view, child, item, _of(view, child).embedded, unchanged):
                return True
        elif not node.keeps_unknown:
            return True
    return False
