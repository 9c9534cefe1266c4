"""`merging.same`, the JSON equality of the managedFields diff: numbers compare by value, booleans are not numbers,
map keys in any order; on random JSON values it answers as a plain recursive walk does."""

from __future__ import annotations

import copy
import random
from typing import Any

from engine.apiserver.merging import same

SCALARS: tuple[Any, ...] = (0, 1, 1.0, 0.0, -0.0, 2.5, True, False, None, "", "1", "true")


def walked(a: Any, b: Any) -> bool:
    """The definition, walked all the way down."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(walked(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(walked(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def value(rnd: random.Random, depth: int = 0) -> Any:
    roll = rnd.random()
    if depth > 2 or roll < 0.4:
        return rnd.choice(SCALARS)
    if roll < 0.7:
        return {rnd.choice("abc"): value(rnd, depth + 1) for _ in range(rnd.randrange(4))}
    return [value(rnd, depth + 1) for _ in range(rnd.randrange(4))]


def altered(rnd: random.Random, original: Any) -> Any:
    """A copy with one scalar somewhere replaced by another (often one `==` takes for it: 1, 1.0, True), or its
    map's keys reordered."""
    new = copy.deepcopy(original)
    if not isinstance(new, dict | list) or not new:
        return rnd.choice(SCALARS)
    holder: Any = new
    while True:
        key = rnd.choice(list(holder)) if isinstance(holder, dict) else rnd.randrange(len(holder))
        child = holder[key]
        if not isinstance(child, dict | list) or not child or rnd.random() < 0.3:
            break
        holder = child
    if isinstance(holder, dict) and rnd.random() < 0.2:
        items = list(holder.items())
        holder.clear()
        holder.update(reversed(items))
    else:
        holder[key] = rnd.choice(SCALARS)
    return new


def test_booleans_are_not_numbers_and_numbers_compare_by_value() -> None:
    assert same({"a": [1, {"b": 2.0}]}, {"a": [1.0, {"b": 2}]})
    assert not same({"a": [1, {"b": True}]}, {"a": [1, {"b": 1}]})
    assert not same([0], [False])
    assert same({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert not same({"a": 1}, {"a": 1, "b": None})


def test_same_answers_as_the_whole_walk_on_random_values() -> None:
    rnd = random.Random(7)
    agreed = {True: 0, False: 0}
    for _ in range(3000):
        a = value(rnd)
        b = altered(rnd, a) if rnd.random() < 0.8 else copy.deepcopy(a)
        expected = walked(a, b)
        assert same(a, b) is expected, (a, b)
        agreed[expected] += 1
    assert min(agreed.values()) > 300  # both answers were asked for often
