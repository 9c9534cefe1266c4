"""The dev cluster's JSON encoder: msgspec's bytes where they are json.dumps' bytes, json.dumps' where a value
holds what the two write differently (NaN and infinities, other floats, non-ASCII text) next to a null."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from engine.apiserver.objects import json_bytes

SCALARS = (None, 0, -2, 2**63 - 1, 2**64 - 1, 2**65, 1.5, 0.0, 1e300, 1e16, float("nan"), float("inf"),
           float("-inf"), True, False, "", "plain", "é", "<&>\u2028", '\x01"\\', "\xcb\x7f\xf0")


def stdlib(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def generated(rnd: random.Random, depth: int = 0) -> Any:
    roll = rnd.random()
    if depth > 3 or roll < 0.3:
        return rnd.choice(SCALARS)
    if roll < 0.6:
        return [generated(rnd, depth + 1) for _ in range(rnd.randint(0, 4))]
    return {f"k{i}": generated(rnd, depth + 1) for i in range(rnd.randint(0, 4))}


@pytest.mark.parametrize("value", [
    {"metadata": {"finalizers": None}}, {"a": float("nan"), "b": None}, {"f": 1e308, "n": None},
    {"s": "é", "n": None}, {"big": 2**70, "n": None}, {True: 1}, [None, "\xcb\x7f\xf0"],
])
def test_values_holding_a_null_are_written_as_json_dumps_writes_them(value: Any) -> None:
    assert json_bytes(value) == stdlib(value)


def test_plain_values_with_nulls_are_compact_json() -> None:
    assert json_bytes({"metadata": {"name": "a", "finalizers": None}, "spec": [1, None]}) == \
        b'{"metadata":{"name":"a","finalizers":null},"spec":[1,null]}'


def test_random_values_with_a_null_read_back_as_json_dumps_writes_them() -> None:
    rnd = random.Random(11)
    for _ in range(3000):
        value = {"n": None, "v": generated(rnd)}
        assert json_bytes(value) == stdlib(value), value
