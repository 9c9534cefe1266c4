"""The guarded filters' shortcuts give what the filters themselves give: generated strings, mappings and lists
through `upper`, `lower`, `string`, `trim`, `quote`, `replace`, `dictsort` and `sort` in the sandbox, against
the same filters in a plain Jinja2 environment, with and without arguments (positional, keyword, and called by name
through `map`) and autoescape (a parameter sorted again gives an equal, new list); and the size limit still stops a
shortcut's result."""

from __future__ import annotations

from typing import Any

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.render.filters import FILTERS
from engine.render.limits import LimitExceeded, Limits
from engine.render.sandbox import environment
from engine.render.values import wrap

TEXT = st.text(alphabet=st.sampled_from("aAbBzZ-_ 1é\n\t\"'<&ß"), max_size=8)
SCALAR = st.one_of(TEXT, st.integers(-3, 3), st.booleans())
TEMPLATES = [
    "{{ v | upper }}", "{{ v | lower }}", "{{ v | string }}", "{{ v | trim }}", "{{ v | trim('a') }}",
    "{{ v | quote }}", "{{ v | replace('a', '-') }}", "{{ v | replace('', '.') }}", "{{ v | replace('a', 'b', 1) }}",
    "{% autoescape true %}{{ v | replace('a', '<') }}{% endautoescape %}", "{{ v | upper | replace('-', '_') }}",
    # keyword arguments (a filter's full form) and filters called by name (`map`: the environment's filter)
    "{{ v | trim(chars='a') }}", "{{ v | replace('a', '-', count=1) }}", "{{ [v, v] | map('upper') | join('.') }}",
    "{{ [v] | map('replace', 'a', '-') | list }}", "{{ v | string | quote }}", "{{ v | center(width=12) }}",
]
SORTING = [
    "{{ v | dictsort }}", "{{ v | dictsort(true) }}", "{{ v | dictsort(reverse=true) }}",
    "{{ v | dictsort(by='value') }}",
    "{{ v | dictsort }}{{ v | dictsort }}{{ (v | dictsort) is sameas (v | dictsort) }}",  # a parameter's, sorted once
    "{{ v | list | sort }}", "{{ v | list | sort(true) }}", "{{ v | list | sort(reverse=true) }}",
]


def _plain(source: str, value: Any) -> str:
    env = jinja2.Environment(keep_trailing_newline=True)
    env.filters.update(FILTERS)
    return env.from_string(source).render(v=value)


def _sandboxed(source: str, value: Any, limits: Limits | None = None) -> str:
    env = environment() if limits is None else environment(limits)
    env.budget.restart()
    return env.from_string(source).render(v=value)


@settings(max_examples=150, deadline=None)
@given(value=SCALAR, source=st.sampled_from(TEMPLATES))
def test_string_filters_give_what_the_filters_give(value: Any, source: str) -> None:
    assert _sandboxed(source, value) == _plain(source, value)


@settings(max_examples=150, deadline=None)
@given(value=st.dictionaries(st.one_of(TEXT, st.integers(0, 3)), SCALAR, max_size=6),
       source=st.sampled_from(SORTING))
def test_sorting_filters_give_what_the_filters_give(value: dict[Any, Any], source: str) -> None:
    try:
        expected = _plain(source, value)
    except TypeError:  # keys of mixed types do not sort: the sandbox refuses them too
        with pytest.raises(TypeError):
            _sandboxed(source, value)
        return
    assert _sandboxed(source, value) == expected
    assert _sandboxed(source, wrap("Params", value)) == expected


def test_a_shortcut_result_over_the_size_limit_is_refused() -> None:
    with pytest.raises(LimitExceeded, match="exceeds the limit of 100"):
        _sandboxed("{{ v | replace('a', 'bbbb') }}", "a" * 40, Limits(max_output=100))
    with pytest.raises(LimitExceeded, match="exceeds the limit of 100"):
        _sandboxed("{{ v | upper }}", "a" * 101, Limits(max_output=100))
    with pytest.raises(LimitExceeded, match="exceeds the limit of 100"):
        _sandboxed("{{ v | string }}", 2**400, Limits(max_output=100))  # an int, measured before it is made text
