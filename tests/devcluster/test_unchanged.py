"""The parts of a write identical to the stored object (engine.apiserver.unchanged), which the schema walks skip:
list items count wherever the stored list holds an identical one, JSON types are told apart, what an earlier walk
of the same write found is taken again only against the same stored object; and on random writes of a custom
resource with lists (items inserted, dropped, moved, changed), the walks that skip those parts find exactly what
the whole walks find."""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

from engine.apiserver import structural
from engine.apiserver.unchanged import NOTHING, Unchanged, identical

ITEM = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$"},
    "state": {"type": "string", "enum": ["A", "B"], "default": "A"},
    "count": {"type": "integer", "minimum": 0},
    "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string", "maxLength": 3}}}}}}
SCHEMA = {"type": "object", "properties": {
    "metadata": {"type": "object"},
    "spec": {"type": "object", "properties": {
        "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "maxItems": 12, "items": ITEM},
        "plain": {"type": "array", "items": ITEM}}}}}
VIEW = structural.SchemaView.custom_resource(SCHEMA, {})
BAD_ITEMS: tuple[dict[str, Any], ...] = (
    {"name": "Upper"}, {"name": "x", "state": "C"}, {"name": "y", "count": -1}, {"name": "z", "count": 1.0},
    {"name": "w", "count": True}, {"name": "v", "bogus": 1}, {"state": "B"}, {"name": "u", "tags": [{"k": "long"}]},
    {"name": "t", "tags": [{"k": 1}]})


def item(rnd: random.Random, i: int) -> dict[str, Any]:
    found: dict[str, Any] = {"name": f"n{i}", "state": rnd.choice(["A", "B"])}
    if rnd.random() < 0.5:
        found["count"] = rnd.randrange(5)
    if rnd.random() < 0.3:
        found["tags"] = [{"k": "a"}, {"k": "bc"}][:rnd.randrange(1, 3)]
    return found


def stored_object(rnd: random.Random) -> dict[str, Any]:
    spec = {"items": [item(rnd, i) for i in range(rnd.randrange(1, 8))],
            "plain": [item(rnd, 100 + i) for i in range(rnd.randrange(0, 5))]}
    obj = {"apiVersion": "g/v1", "kind": "W", "metadata": {"name": "w"}, "spec": spec}
    assert not structural.validate(VIEW, obj) and not structural.prune(VIEW, copy.deepcopy(obj))
    return obj


def changed(rnd: random.Random, stored: dict[str, Any]) -> dict[str, Any]:
    """A new body: the stored object with a few of its lists' items inserted, dropped, moved or changed."""
    new = copy.deepcopy(stored)
    for _ in range(rnd.randrange(1, 4)):
        items = new["spec"][rnd.choice(["items", "plain"])]
        action = rnd.choice(["insert", "insert-bad", "drop", "move", "change", "duplicate"])
        if action == "insert":
            items.insert(rnd.randrange(len(items) + 1), item(rnd, rnd.randrange(50)))
        elif action == "insert-bad":
            items.insert(rnd.randrange(len(items) + 1), copy.deepcopy(rnd.choice(BAD_ITEMS)))
        elif items and action == "drop":
            items.pop(rnd.randrange(len(items)))
        elif items and action == "move":
            items.insert(rnd.randrange(len(items)), items.pop(rnd.randrange(len(items))))
        elif items and action == "change":
            target = items[rnd.randrange(len(items))]
            target[rnd.choice(["state", "count", "extra"])] = rnd.choice(["A", "C", 1, 1.0, True, -2, None])
        elif items and action == "duplicate":
            items.insert(rnd.randrange(len(items) + 1), copy.deepcopy(rnd.choice(items)))
    return new


def walks(obj: dict[str, Any], unchanged: Unchanged) -> tuple[Any, ...]:
    """What the schema walks of a write find in `obj` (changed in place by pruning and defaults)."""
    mismatches = [(m.path, m.got) for m in structural.type_mismatches(VIEW, obj, unchanged)]
    unknown = structural.prune(VIEW, obj, unchanged)
    structural.apply_defaults(VIEW, obj, unchanged)
    errors = [(e.type, e.field, repr(e.value)) for e in structural.validate(VIEW, obj, unchanged)]
    return mismatches, unknown, errors, obj


def nodes(value: Any) -> Iterator[Any]:
    if isinstance(value, dict | list):
        yield value
        for child in value.values() if isinstance(value, dict) else value:
            yield from nodes(child)


def test_an_item_moved_in_a_list_is_unchanged_and_a_changed_one_is_not() -> None:
    stored = {"items": [{"name": "a"}, {"name": "c"}, {"name": "d", "n": 1}]}
    new = {"items": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d", "n": 2}]}
    unchanged = Unchanged(new, stored)
    assert new["items"][0] in unchanged and new["items"][2] in unchanged
    assert new["items"][1] not in unchanged and new["items"][3] not in unchanged and new["items"] not in unchanged


def test_json_types_are_told_apart_wherever_an_item_is_found() -> None:
    stored = [{"n": 1}, {"n": True}]
    for value in (1.0, True):
        new = [{"x": 0}, {"n": value}]
        assert (new[1] in Unchanged(new, stored)) is (value is True)


def test_identical_is_equal_in_value_json_type_and_key_order() -> None:
    big = 2**70  # beyond MessagePack's integers
    same = [({"a": [1, "x", None, {"b": 2.5}]}, {"a": [1, "x", None, {"b": 2.5}]}), ({"n": big}, {"n": big}),
            ([{"n": -0.0}], [{"n": -0.0}])]
    apart = [({"n": 1}, {"n": 1.0}), ({"n": 1}, {"n": True}), ({"n": 0}, {"n": False}), ({"n": 0.0}, {"n": -0.0}),
             ({"n": big}, {"n": float(big)}), ({"a": 1, "b": 2}, {"b": 2, "a": 1}), ([[1]], [(1,)]),
             ({"n": 1}, {"n": 2})]
    assert all(identical(a, b) and identical(b, a) for a, b in same)
    assert not any(identical(a, b) or identical(b, a) for a, b in apart)
    thing = object()
    assert not identical({"o": thing}, {"o": thing})  # not JSON-shaped


def test_an_earlier_walk_counts_only_against_the_same_stored_object_and_for_what_it_left_alone() -> None:
    stored = {"a": {"x": 1}, "b": [{"y": 1}, {"z": 2}]}
    new = {"a": {"x": 1}, "b": [{"z": 2}, {"w": 3}]}
    first = Unchanged(new, stored)
    assert new["a"] in first and new["b"][0] in first
    assert new["a"] in Unchanged(new, stored, first) and new["b"][0] in Unchanged(new, stored, first)
    other = copy.deepcopy(stored)
    other["a"]["x"] = 1.0  # equal, but not the object the first walk compared with: tested again, strictly
    assert new["a"] not in Unchanged(new, other, first)
    new["a"]["x"], new["b"][0]["z"] = 2, 3  # changed after the first walk
    assert new["a"] not in Unchanged(new, stored, first) and new["b"][0] not in Unchanged(new, stored, first)


def test_the_walks_that_skip_unchanged_parts_find_what_the_whole_walks_find() -> None:
    rnd = random.Random(11)
    skipped = 0
    for _ in range(1500):
        stored = stored_object(rnd)
        new = changed(rnd, stored)
        whole = walks(copy.deepcopy(new), NOTHING)
        body = copy.deepcopy(new)
        unchanged = Unchanged(body, stored)
        again = Unchanged(body, stored, unchanged)
        assert {id(n) for n in nodes(body) if n in again} == {id(n) for n in nodes(body) if n in unchanged}
        skipped += sum(1 for n in nodes(body) if n in unchanged)
        assert walks(body, unchanged) == whole, new
    assert skipped
