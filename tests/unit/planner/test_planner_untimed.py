"""`same_untimed` (whether two status records differ only in their `lastUpdatedAt` stamps) against the plain
definition: both with every stamp left out, then compared. A pass compares its whole plan record with the one before
this way, walking it in parts rather than stripping copies."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.planner.finish import same_untimed

STAMP = "lastUpdatedAt"

scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False, width=16) | st.sampled_from(
    ["", "a", "COMPLETE", "2024-05-01T12:00:00Z"])
keys = st.sampled_from(["name", "status", "message", "steps", STAMP])
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=4),
                      max_leaves=12)


def untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k != STAMP}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def restamped(value: Any, stamp: Any) -> Any:
    """`value` with every stamp it holds replaced by `stamp` (None: left out): the same record untimed."""
    if isinstance(value, dict):
        found = {k: restamped(v, stamp) for k, v in value.items() if k != STAMP}
        return {**found, STAMP: stamp} if stamp is not None and STAMP in value else found
    if isinstance(value, list):
        return [restamped(v, stamp) for v in value]
    return value


@settings(max_examples=400, deadline=None)
@given(values, values)
def test_two_records_are_the_same_untimed_exactly_when_they_are_equal_without_their_stamps(one: Any,
                                                                                            other: Any) -> None:
    assert same_untimed(one, other) == (untimed(one) == untimed(other))


@settings(max_examples=300, deadline=None)
@given(values, st.none() | st.sampled_from(["2024-05-01T12:00:01Z", "later"]))
def test_a_record_whose_stamps_alone_changed_is_the_same_untimed(one: Any, stamp: Any) -> None:
    assert same_untimed(one, restamped(one, stamp))
    assert same_untimed(restamped(one, stamp), one)
