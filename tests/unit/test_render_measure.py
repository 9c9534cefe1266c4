"""`limits.measure`'s shortcuts give what its walk gives: a list of strings, and a parameter's mapping (`Values`,
measured once and charged again on each later look) come to the same size and the same operations as the same value
walked node by node (as a tuple, or as a plain dict); over the size limit, the walk's own refusal."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.render.limits import DEFAULT_LIMITS, Budget, LimitExceeded, Limits, measure
from engine.render.values import wrap

TEXT = st.text(max_size=12)
VALUES = st.recursive(st.one_of(TEXT, st.integers(), st.booleans(), st.none()),
                      lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
                      max_leaves=20)


def _measured(value: Any, limits: Limits = DEFAULT_LIMITS) -> tuple[int, int]:
    budget = Budget(limits)
    budget.restart()
    return measure(value, budget), budget.operations


@settings(max_examples=200, deadline=None)
@given(st.lists(TEXT, max_size=30))
def test_a_list_of_strings_measures_as_its_walk(items: list[str]) -> None:
    assert _measured(items) == _measured(tuple(items))  # a tuple takes the walk, node by node


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(TEXT, VALUES, max_size=6))
def test_a_parameter_measures_as_its_walk_each_time(data: dict[str, Any]) -> None:
    values = wrap("Params", data)
    walked = _measured(data)
    budget = Budget(DEFAULT_LIMITS)
    budget.restart()
    assert measure(values, budget) == walked[0] and budget.operations == walked[1]
    assert measure(values, budget) == walked[0] and budget.operations == 2 * walked[1]  # known now, charged again


def test_over_the_size_limit_the_walk_refuses_it() -> None:
    small = Limits(max_output=50)
    for value in (["x" * 30, "y" * 30], wrap("Params", {"a": "x" * 30, "b": "y" * 30})):
        with pytest.raises(LimitExceeded, match=r"a value of \d+ characters exceeds the limit of 50"):
            _measured(value, small)
    values = wrap("Params", {"a": "x" * 30})
    _measured(values)  # known under the default limits now
    with pytest.raises(LimitExceeded, match="exceeds the limit of 20"):
        _measured(values, Limits(max_output=20))
