"""Typed walks of structured-merge-diff: field sets of values, comparison, apply merge and prune."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from engine.apiserver.fieldpath import FieldSet, Path, PathElement, Trie, key_element, value_element
from engine.apiserver.objects import copy_json
from engine.apiserver.schema import ANY, TypeNode
from engine.apiserver.unchanged import identical

__all__ = ["MISSING", "Comparison", "compare", "fieldset", "item_element", "merge", "prune", "same"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()
"""An absent value, as opposed to an explicit null."""

Shape = Literal["map", "list"] | None


def same(a: Any, b: Any) -> bool:
    """JSON equality: numbers compare by value, but booleans are not numbers. Two maps or lists `same` finds equal
    are equal to `==` too, which tells unequal ones apart in C: only equal ones are walked, for their booleans."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict):
        return isinstance(b, dict) and a == b and all(same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return isinstance(b, list) and a == b and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def item_element(item: Any, type_: TypeNode, index: int) -> PathElement:
    """The path element of a list item: `k:` by its key fields (defaults filled in), `v:` by value."""
    if type_.list_type == "set":
        return value_element(item)
    if type_.list_type == "map" and isinstance(item, dict):
        keys = {k: item[k] if k in item else type_.key_defaults[k]
                for k in type_.map_keys if k in item or k in type_.key_defaults}
        return key_element(keys)
    return ("i", str(index))


def _shape(value: Any, type_: TypeNode) -> Shape:
    """How a value is walked under its type: a granular map/struct, an associative list, or a leaf (None)."""
    if type_.is_leaf:
        return None
    if isinstance(value, dict) and type_.kind in ("struct", "map", "any"):
        return "map"
    if isinstance(value, list) and type_.kind == "list":
        return "list"
    return None


def _common_shape(a: Any, b: Any, type_: TypeNode) -> Shape:
    """The shape both sides share; a leaf when they differ or when both are empty or null."""
    present = [v for v in (a, b) if v is not MISSING and v is not None]
    shapes = {_shape(v, type_) for v in present}
    if len(shapes) != 1 or all(not v for v in present):
        return None
    return shapes.pop()


def _items(value: Any, type_: TypeNode, shape: Shape) -> dict[PathElement, tuple[Any, TypeNode]]:
    """Children of a map or list by path element (the first of duplicate list keys wins)."""
    out: dict[PathElement, tuple[Any, TypeNode]] = {}
    if value is MISSING or value is None:
        return out
    if shape == "map":
        for name, child in value.items():
            out[("f", name)] = (child, type_.field(name))
        return out
    for index, item in enumerate(value):
        out.setdefault(item_element(item, type_, index), (item, type_.elem or ANY))
    return out


def fieldset(value: Any, type_: TypeNode) -> set[Path]:
    """The paths an applied configuration sets (structured-merge-diff ToFieldSet)."""
    out: set[Path] = set()
    _fieldset(value, type_, (), out)
    return out


def _fieldset(value: Any, type_: TypeNode, path: Path, out: set[Path]) -> None:
    shape = _shape(value, type_)
    if shape is None:
        if path:
            out.add(path)
        return
    for element, (child, child_type) in _items(value, type_, shape).items():
        child_path = (*path, element)
        _fieldset(child, child_type, child_path, out)
        if shape == "list" or child is None or child == {} or not type_.declares(element[1]):
            out.add(child_path)


@dataclass
class Comparison:
    """What a write did, path by path: Added includes new parents, Modified only changed leaves."""

    added: set[Path] = field(default_factory=set)
    modified: set[Path] = field(default_factory=set)
    removed: set[Path] = field(default_factory=set)


def compare(old: Any, new: Any, type_: TypeNode) -> Comparison:
    result = Comparison()
    _compare(old, new, type_, (), result)
    return result


def _compare(old: Any, new: Any, type_: TypeNode, path: Path, result: Comparison) -> None:
    if old is MISSING:
        _added(new, type_, path, result.added)
        return
    if isinstance(new, dict | list) and identical(old, new):
        return  # nothing below changed
    shape = _common_shape(old, new, type_)
    if shape is not None:
        old_items, new_items = _items(old, type_, shape), _items(new, type_, shape)
        for element in {**old_items, **new_items}:
            old_child, child_type = old_items.get(element, (MISSING, ANY))
            new_child, child_type = new_items.get(element, (MISSING, child_type))
            if _scalar(old_child) and _scalar(new_child):  # what `_compare` does with two leaves, without the call
                if not same(old_child, new_child):
                    result.modified.add((*path, element))
                continue
            _compare(old_child, new_child, child_type, (*path, element), result)
    if not path:
        return
    if old is MISSING:
        result.added.add(path)
    elif new is MISSING:
        result.removed.add(path)
    elif shape is None and not same(old, new):
        result.modified.add(path)


def _added(new: Any, type_: TypeNode, path: Path, added: set[Path]) -> None:
    """`_compare` of a value that was not there: the value's path and every path below it are added."""
    shape = _shape(new, type_) if new else None  # empty or null: a leaf
    if shape is not None:
        for element, (child, child_type) in _items(new, type_, shape).items():
            if not child or not isinstance(child, dict | list):  # a leaf: only its own path
                added.add((*path, element))
            else:
                _added(child, child_type, (*path, element), added)
    if path:
        added.add(path)


def _scalar(value: Any) -> bool:
    """A present value that is no map or list (null included)."""
    return value is not MISSING and not isinstance(value, dict | list)


def merge(live: Any, config: Any, type_: TypeNode) -> Any:
    """Merge an applied configuration into the live value: config wins, granular parts merge per key."""
    if config is MISSING:
        return copy_json(live)
    shape = _common_shape(live, config, type_) if live is not MISSING else None
    if shape is None:
        return _without_nulls(config)
    if shape == "map":
        return _merge_maps(live or {}, config or {}, type_)
    return _merge_lists(live or [], config or [], type_)


def _merge_maps(live: dict[str, Any], config: dict[str, Any], type_: TypeNode) -> dict[str, Any]:
    out = {}
    for name, value in live.items():
        if config.get(name, MISSING) is not None:
            out[name] = merge(value, config.get(name, MISSING), type_.field(name))
    for name, value in config.items():
        if name not in live and value is not None:
            out[name] = merge(MISSING, value, type_.field(name))
    return out


def _merge_lists(live: list[Any], config: list[Any], type_: TypeNode) -> list[Any]:
    """Merge associative lists: shared items follow the config's order, live-only items keep their place."""
    elem = type_.elem or ANY
    lhs = [(item_element(v, type_, i), v) for i, v in enumerate(live)]
    rhs = [(item_element(v, type_, i), v) for i, v in enumerate(config)]
    live_by, config_by = dict(reversed(lhs)), dict(reversed(rhs))
    shared = iter([e for e, _ in rhs if e in live_by] + [None])
    next_shared = next(shared)
    taken: set[PathElement] = set()
    out: list[Any] = []
    li = ri = 0
    while li < len(lhs) or ri < len(rhs):
        if li < len(lhs) and ri < len(rhs):
            element = lhs[li][0]
            if element == rhs[ri][0]:
                taken.add(element)
                out.append(merge(live_by[element], config_by[element], elem))
                li, ri, next_shared = li + 1, ri + 1, next(shared, None)
                continue
            if element in config_by and next_shared is not None and next_shared != element:
                li += 1
                continue
        if li < len(lhs):
            element = lhs[li][0]
            if element not in config_by:
                out.append(copy_json(lhs[li][1]))
                li += 1
                continue
            if element in taken or ri >= len(rhs):
                li += 1
                continue
        element = rhs[ri][0]
        taken.add(element)
        out.append(merge(live_by.get(element, MISSING), config_by[element], elem))
        ri += 1
        if next_shared == element:
            next_shared = next(shared, None)
    return out


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def prune(value: Any, remove: FieldSet, keep: FieldSet, type_: TypeNode) -> Any:
    """Remove the `remove` paths, except nodes with `keep` paths below them (these stay with those parts).

    Containers emptied by the removal go too, unless they are themselves kept."""
    return _prune(value, Trie.of(remove), Trie.of(keep), type_)


def _prune(value: Any, remove: Trie, keep: Trie | None, type_: TypeNode) -> Any:
    shape = _shape(value, type_)
    if shape is None:
        return value
    kept: list[tuple[PathElement, Any]] = []
    for element, (child, child_type) in _items(value, type_, shape).items():
        kept.extend(_prune_child(element, child, child_type, remove, keep, type_))
    if shape == "map":
        return {element[1]: child for element, child in kept}
    return [child for _, child in kept]


def _prune_child(element: PathElement, child: Any, child_type: TypeNode, remove: Trie, keep: Trie | None,
                 parent_type: TypeNode) -> Iterator[tuple[PathElement, Any]]:
    removing = remove.child(element)
    if removing is None:
        yield element, child
        return
    keeping = keep.child(element) if keep else None
    if removing.member and not (keeping and keeping.children):
        return
    pruned = _prune(child, removing, keeping, child_type)
    if isinstance(pruned, dict) and isinstance(child, dict) and parent_type.list_type == "map":
        pruned.update({k: child[k] for k in parent_type.map_keys if k in child})
    if child and not pruned and not (keeping and keeping.member):
        return
    yield element, pruned
