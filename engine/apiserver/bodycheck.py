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
    """What the two walks read of one schema node, resolved through its `$ref`, with the resolved nodes of its
    children remembered as the walks first ask for them (schema nodes never change)."""

    __slots__ = ("_fields", "_items", "_memo", "_typed", "embedded", "expected", "extra", "int_or_string", "items",
                 "items_embedded", "keeps_unknown", "properties")

    def __init__(self, view: SchemaView, raw: Schema, memo: NodeMemo[_Resolved]) -> None:
        node = view.resolve(raw)
        self._memo = memo
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
        self._typed: dict[str, _Resolved | None] = {}  # key → the node the type walk checks its value against
        self._fields: dict[str, _Resolved | None] = {}  # key → the node pruning walks into (None: not declared)
        self._items: _Resolved | None = None

    def typed(self, key: str) -> _Resolved | None:
        """The child node `structural.type_mismatches` checks the value of `key` against (None: unchecked)."""
        if key in self._typed:
            return self._typed[key]
        raw = self.properties.get(key) or self.extra
        found = self._typed[key] = None if raw is None else self._memo(raw)
        return found

    def field(self, key: str) -> _Resolved | None:
        """The child node `structural.prune` walks into for `key` outside an embedded resource (None: unknown)."""
        if key in self._fields:
            return self._fields[key]
        raw = self.properties.get(key)
        if raw is None:
            raw = self.extra
        found = self._fields[key] = None if raw is None else self._memo(raw)
        return found

    def item(self) -> _Resolved:
        """The node of the list's items (only asked of nodes that have `items`)."""
        if self._items is None:
            assert self.items is not None
            self._items = self._memo(self.items)
        return self._items


_RESOLVED: dict[int, NodeMemo[_Resolved]] = {}  # per set of definitions: what each schema node resolves to


def _of(view: SchemaView, raw: Schema) -> _Resolved:
    memo = _RESOLVED.get(id(view.definitions))
    if memo is None:
        memo = _RESOLVED[id(view.definitions)] = _memo_for(view)
    return memo(raw)


def _memo_for(view: SchemaView) -> NodeMemo[_Resolved]:
    memo: NodeMemo[_Resolved] = NodeMemo(lambda node: _Resolved(view, node, memo))
    return memo


def has_mismatch(view: SchemaView, obj: Any, unchanged: Unchanged) -> bool:
    """Whether `structural.type_mismatches` finds a value of the wrong JSON type (a built-in view)."""
    return _mismatch(_of(view, view.root), obj, unchanged)


def _mismatch(node: _Resolved, value: Any, unchanged: Unchanged) -> bool:
    if value is None or value in unchanged or node.int_or_string:
        return False
    if node.expected and not type_matches(node.expected, value):
        return True
    if isinstance(value, dict):
        return any((child := node.typed(key)) is not None and _mismatch(child, item, unchanged)
                   for key, item in value.items())
    if isinstance(value, list) and node.items is not None:
        items = node.item()
        return any(_mismatch(items, item, unchanged) for item in value)
    return False


def has_unknown(view: SchemaView, obj: Any, unchanged: Unchanged) -> bool:
    """Whether `structural.prune` would drop a field the schema does not declare (a built-in view)."""
    return _unknown(view, _of(view, view.root), obj, False, unchanged)


def _unknown(view: SchemaView, node: _Resolved, value: Any, embedded: bool, unchanged: Unchanged) -> bool:
    if value in unchanged:
        return False
    if isinstance(value, list):
        return node.items is not None and any(_unknown(view, node.item(), item, node.items_embedded, unchanged)
                                              for item in value)
    if not isinstance(value, dict):
        return False
    for key, item in value.items():
        if embedded and key in _EMBEDDED_KEYS and node.properties.get(key) is None:
            child: _Resolved | None = _of(view, _META_REF if key == "metadata" else _STRING)
        else:
            child = node.field(key)
        if child is not None:
            if _unknown(view, child, item, child.embedded, unchanged):
                return True
        elif not node.keeps_unknown:
            return True
    return False
