"""Quantities of the built-in kinds in the server's canonical form, found from the kinds' schemas.

The real server decodes every `resource.Quantity` field into a Quantity and writes it back canonical
(`1000m` → `1`); the generated defaulters of the groups below also round every ResourceList (a map of
quantities: requests, limits, capacity, ResourceQuota hard, LimitRange max...) up to the milliunit.
Custom resources are stored as sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine import quantity
from engine.apiserver.structural import NodeMemo, Schema, SchemaView
from engine.apiserver.unchanged import NOTHING, Unchanged

__all__ = ["canonicalise"]

QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
# Groups whose defaulters call SetDefaults_ResourceList (k8s.io/kubernetes pkg/apis/*/zz_generated.defaults.go).
ROUNDING_GROUPS = frozenset({"", "apps", "batch", "extensions", "storage.k8s.io"})

_holders: dict[int, frozenset[str]] = {}
_reaching: dict[frozenset[str], NodeMemo[bool]] = {}  # per holders: whether a quantity can be below a schema node


def canonicalise(view: SchemaView, group: str, obj: Any, unchanged: Unchanged = NOTHING) -> None:
    """Rewrite every quantity of a built-in object in place; a malformed one raises QuantityError. Parts
    `unchanged` from a stored object are canonical already."""
    holders = _quantity_holders(view.definitions)
    if _reaches(holders, view.root):  # else the kind holds no quantity (an Event, a ConfigMap): nothing to walk
        _walk(view, holders, view.root, obj, group in ROUNDING_GROUPS, unchanged)


def _ref(node: Schema) -> str:
    ref = node.get("$ref")
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else ""


def _walk(view: SchemaView, holders: frozenset[str], node: Schema, value: Any, rounding: bool,
          unchanged: Unchanged) -> None:
    if value in unchanged:
        return
    node = view.resolve(node)
    if isinstance(value, dict):
        properties = node.get("properties") or {}
        extra = node.get("additionalProperties")
        for key, child_value in value.items():
            child = properties.get(key)
            in_map = child is None and isinstance(extra, Mapping)
            child = extra if in_map else child
            if isinstance(child, Mapping) and child_value is not None:
                value[key] = _visit(view, holders, child, child_value, rounding, in_map, unchanged)
    elif isinstance(value, list) and isinstance(node.get("items"), Mapping):
        for i, item in enumerate(value):
            if item is not None:
                value[i] = _visit(view, holders, node["items"], item, rounding, False, unchanged)


def _visit(view: SchemaView, holders: frozenset[str], node: Schema, value: Any, rounding: bool,
           in_map: bool, unchanged: Unchanged) -> Any:
    """The canonical form of a quantity (rounded when it is a ResourceList's value), or the walked value."""
    if _ref(node) == QUANTITY:
        return quantity.canonical(value, resource_list=rounding and in_map)
    if _reaches(holders, node):
        _walk(view, holders, node, value, rounding, unchanged)
    return value


def _reaches(holders: frozenset[str], node: Schema) -> bool:
    """Whether a quantity can sit anywhere below this schema node (remembered per node: schemas do not change)."""
    memo = _reaching.get(holders)
    if memo is None:
        memo = _reaching[holders] = NodeMemo(lambda raw: _search(holders, raw))
    return memo(node)


def _search(holders: frozenset[str], node: Schema) -> bool:
    ref = _ref(node)
    if ref:
        return ref in holders
    children = [*(node.get("properties") or {}).values(), node.get("additionalProperties"), node.get("items")]
    return any(isinstance(c, Mapping) and (_ref(c) == QUANTITY or _reaches(holders, c)) for c in children)


def _quantity_holders(definitions: Mapping[str, Schema]) -> frozenset[str]:
    """The definitions that hold a quantity, directly or through other definitions (computed once)."""
    key = id(definitions)
    if key not in _holders:
        refs = {name: _refs_in(schema) for name, schema in definitions.items()}
        holding = {name for name, found in refs.items() if QUANTITY in found}
        grew = True
        while grew:
            more = {name for name, found in refs.items() if name not in holding and found & holding}
            holding |= more
            grew = bool(more)
        _holders[key] = frozenset(holding)
    return _holders[key]


def _refs_in(schema: Any) -> set[str]:
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str):
                found.add(ref.rsplit("/", 1)[-1])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found
