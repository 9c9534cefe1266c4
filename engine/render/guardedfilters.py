"""The filters templates call, each behind the render's budget, with native shortcuts for their common cases.

Every filter is charged one operation, its arguments checked (`guards.check_filter`) and its result's size
checked. A shortcut gives the result the filter itself would give, with fewer Python calls: a plain string given
to a filter that ends in one string method, strings given to `replace`, and `dictsort` and `sort` of string keys
and items without arguments. Anything else goes to the filter.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from jinja2.filters import FILTERS as DEFAULT_FILTERS
from jinja2.filters import do_dictsort, do_lower, do_replace, do_sort, do_trim, do_upper
from jinja2.runtime import Context
from jinja2.utils import _PassArg, pass_context
from markupsafe import soft_str

from engine.render.filters import FILTERS
from engine.render.guards import check_filter, filter_is_checked, filter_measures_only
from engine.render.limits import Budget
from engine.render.values import Values

__all__ = ["GUARDED_FILTERS"]

# Jinja2 built-ins left out: `random` makes output non-deterministic.
_DROPPED_FILTERS = frozenset({"random"})


def guarded_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """`func` behind the render's budget: charged, its arguments checked, its result's size checked (the common
    cases, a string measured and a string returned, without a call), by a shortcut where one applies."""
    if func is do_replace:
        return _guarded_replace()
    pass_arg = _PassArg.from_obj(func)
    checked, measured_only = filter_is_checked(name), filter_measures_only(name)
    on_string, on_value = _ON_PLAIN_STRINGS.get(func), _WITHOUT_ARGUMENTS.get(func)

    @pass_context
    def guarded(context: Context, value: Any, *args: Any, **kwargs: Any) -> Any:
        env = context.environment
        budget: Budget = env.budget  # type: ignore[attr-defined]
        if type(value) is str and (measured_only or not checked):
            if measured_only:
                budget.charge_text(len(value) + 2, 2, "a value")  # the filter, and measuring its value
            else:
                budget.charge()
            if on_string is not None and not args and not kwargs:
                if on_string is _SAME:
                    return value
                text = on_string(value)
                if len(text) > budget.limits.max_output:
                    budget.check_text(len(text))
                return text
        else:
            budget.charge()
            if checked:
                value = check_filter(budget, name, value, args, kwargs)
            elif on_value is not None and not args and not kwargs:
                found = on_value(value)
                if found is not None:
                    return budget.check_result(found)
        if pass_arg is None:
            result = func(value, *args, **kwargs)
        elif pass_arg is _PassArg.context:
            result = func(context, value, *args, **kwargs)
        elif pass_arg is _PassArg.eval_context:
            result = func(context.eval_ctx, value, *args, **kwargs)
        else:
            result = func(env, value, *args, **kwargs)
        if type(result) is not str or len(result) > budget.limits.max_output:
            budget.check_result(result)
        return result

    return guarded


def _guarded_replace() -> Callable[..., Any]:
    """Jinja2's `replace` behind the budget. Its common case (strings, no count, autoescape off) is what the
    filter does then, `str.replace`, its size checked first as `check_filter` checks it."""

    @pass_context
    def guarded(context: Context, value: Any, *args: Any, **kwargs: Any) -> Any:
        budget: Budget = context.environment.budget  # type: ignore[attr-defined]
        budget.charge()
        if (type(value) is str and len(args) == 2 and not kwargs and type(args[0]) is str and type(args[1]) is str
                and not context.eval_ctx.autoescape):
            old, new = args
            if len(value) + (len(value) // len(old) if old else len(value) + 1) * len(new) > budget.limits.max_output:
                check_filter(budget, "replace", value, args, kwargs)
            return value.replace(old, new)
        value = check_filter(budget, "replace", value, args, kwargs)
        return budget.check_result(do_replace(context.eval_ctx, value, *args, **kwargs))

    return guarded


def _same(value: str) -> str:
    return value


_SAME = _same  # a filter that gives a plain string back as it is (`string`, of a string)
def _dictsort(value: Any) -> list[tuple[str, Any]] | None:
    """`dictsort` of a mapping whose keys are all strings; None for anything else (a parameter's, sorted once per
    render: a template often sorts the same one in several places, or in a loop)."""
    if type(value) is Values:
        found = value.derived(_sorted_items)
        return None if found is None else list(found)
    return _sorted_items(value) if isinstance(value, Mapping) else None


def _sorted_items(value: Mapping[Any, Any]) -> list[tuple[str, Any]] | None:
    items = [(key, value[key]) for key in value]  # what `value.items()` yields, without its generator
    return _by_lowered(items, [key for key, _ in items])


def _sort(value: Any) -> list[str] | None:
    """`sort` of a list of strings; None for anything else."""
    return _by_lowered(value, value) if type(value) is list else None


def _by_lowered(items: list[Any], keys: list[Any]) -> list[Any] | None:
    """`items` sorted by their `keys` in lower case, ties kept in order (as Jinja2 sorts); None unless every key is
    a string."""
    if not all(type(key) is str for key in keys):
        return None
    lowered = list(map(str.lower, keys))
    return list(map(items.__getitem__, sorted(range(len(items)), key=lowered.__getitem__)))


# Filters whose work on a plain string, with no arguments, is one native call (Jinja2's `string` and `trim`
# take any value to `str` first, which a string already is; kplan's `quote` is JSON's string encoding).
_ON_PLAIN_STRINGS: Mapping[Callable[..., Any], Callable[[str], str]] = {
    do_upper: str.upper,
    do_lower: str.lower,
    soft_str: _SAME,
    do_trim: str.strip,
    FILTERS["quote"]: json.encoder.encode_basestring,  # what `quote` does with a string
}
# Filters with a shortcut for some values, given no arguments (None: it does not apply).
_WITHOUT_ARGUMENTS: Mapping[Callable[..., Any], Callable[[Any], Any]] = {do_dictsort: _dictsort, do_sort: _sort}

# Built once: every environment serves the same guarded filters (they find the render's budget through the
# context).
GUARDED_FILTERS: Mapping[str, Callable[..., Any]] = {
    name: guarded_filter(name, f) for name, f in {**DEFAULT_FILTERS, **FILTERS}.items() if name not in _DROPPED_FILTERS
}
