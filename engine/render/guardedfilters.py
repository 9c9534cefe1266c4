"""The filters templates call, each behind the render's budget, with native shortcuts for their common cases.

Every filter is charged one operation, its arguments checked (`guards.check_filter`) and its result's size
checked. A shortcut gives the result the filter itself would give, with fewer Python calls: a plain string given
to a filter that ends in one string method, strings given to `replace`, and `dictsort` and `sort` of string keys
and items without arguments. Anything else goes to the filter.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from jinja2 import Environment
from jinja2.filters import FILTERS as DEFAULT_FILTERS
from jinja2.filters import do_dictsort, do_lower, do_replace, do_sort, do_trim, do_upper
from jinja2.nodes import EvalContext
from jinja2.runtime import Context
from jinja2.utils import _PassArg, pass_context, pass_eval_context
from markupsafe import soft_str

from engine.render.filters import FILTERS
from engine.render.guards import check_filter, filter_is_checked, filter_measures_only
from engine.render.limits import Budget
from engine.render.values import Values

__all__ = ["BoundFilters"]

# Jinja2 built-ins left out: `random` makes output non-deterministic.
_DROPPED_FILTERS = frozenset({"random"})

Filter = Callable[..., Any]


class Bound(NamedTuple):
    """A filter's guarded forms for one environment: `full` takes keyword arguments too (the environment's
    `filters`); `positional` none, which spares a call without them building an empty dict of them (the compiled
    call of a filter given no keyword arguments). `full` takes the context, so that Jinja2 does not call it when
    it compiles a template (to fold a filter of constants), as it never called the filters of earlier kplan."""

    full: Filter
    positional: Filter


Binder = Callable[[Budget, Environment], Bound]  # makes a filter's guarded forms for one environment's budget


class BoundFilters(dict[str, Filter]):
    """Every filter templates may call, behind `budget`, for `environment` alone (it holds one render's budget at
    a time): the full forms as a mapping (the environment's `filters`), the positional forms in `positional`. Each
    is bound to the budget, so the compiled call passes no context to find it, unless the filter itself takes one;
    and bound when first looked up, as a template uses a few of them and an environment is made for each render
    that has no cache."""

    def __init__(self, budget: Budget, environment: Environment) -> None:
        super().__init__()
        self._budget, self._environment = budget, environment
        self.positional: dict[str, Filter] = {}

    def __missing__(self, name: str) -> Filter:
        bind = _BINDERS.get(name)
        if bind is None:
            raise KeyError(name)
        forms = bind(self._budget, self._environment)
        self[name], self.positional[name] = forms
        return forms.full

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default

    def __contains__(self, name: object) -> bool:
        return dict.__contains__(self, name) or name in _BINDERS

    def positional_form(self, name: str) -> Filter | None:
        """The form of the filter `name` for a call without keyword arguments; None for a filter there is not."""
        return self.positional[name] if self.get(name) is not None else None


def guarded_filter(name: str, func: Filter) -> Binder:
    """`func` behind a budget: charged, its arguments checked, its result's size checked (the common cases, a
    string measured and a string returned, counted inline), by a shortcut where one applies."""
    if func is do_replace:
        return _guarded_replace
    pass_arg = _PassArg.from_obj(func)
    if pass_arg is _PassArg.context or pass_arg is _PassArg.eval_context:
        return _with_context(name, func, pass_arg)
    checked, measured_only = filter_is_checked(name), filter_measures_only(name)
    on_string, on_value, on_int = _ON_PLAIN_STRINGS.get(func), _WITHOUT_ARGUMENTS.get(func), _ON_INTS.get(func)
    on_strings = measured_only or not checked  # a plain string needs no check but its size
    string_charge = 2 if measured_only else 1  # the filter, and measuring its value

    def bind(budget: Budget, environment: Environment) -> Bound:
        limit = budget.limits.max_output
        call = func if pass_arg is None else functools.partial(func, environment)

        def positional(value: Any, *args: Any) -> Any:
            if type(value) is str and on_strings:
                budget.operations += string_charge
                if budget.operations >= budget.next_look:
                    budget.look()
                if measured_only and len(value) + 2 > limit:
                    budget.check_text(len(value) + 2, "a value")
                if on_string is not None and not args:
                    if on_string is _SAME:
                        return value
                    text = on_string(value)
                    if len(text) > limit:
                        budget.check_text(len(text))
                    return text
            elif type(value) is int and measured_only:  # measured as `measure` measures an int
                budget.operations += 2
                if budget.operations >= budget.next_look:
                    budget.look()
                if value.bit_length() // 3 + 2 > limit:
                    budget.check_text(value.bit_length() // 3 + 2, "a value")
                if on_int is not None and not args:
                    return on_int(value)
            else:
                budget.charge()
                if checked:
                    value = check_filter(budget, name, value, args, _NO_KEYWORDS)
                elif on_value is not None and not args:
                    found = on_value(value)
                    if found is not None:
                        return budget.check_result(found)
            result = call(value, *args)
            if type(result) is not str or len(result) > limit:
                budget.check_result(result)
            return result

        @pass_context  # as the environment's filter (`Bound`)
        def full(context: Context, value: Any, *args: Any, **kwargs: Any) -> Any:
            if not kwargs:
                return positional(value, *args)
            budget.charge()  # a plain string measured by `check_filter` is charged as `positional` charges it
            if checked:
                value = check_filter(budget, name, value, args, kwargs)
            return budget.check_result(call(value, *args, **kwargs))

        return Bound(full, positional)

    return bind


_NO_KEYWORDS: Mapping[str, Any] = MappingProxyType({})


def _with_context(name: str, func: Filter, pass_arg: _PassArg) -> Binder:
    """A filter that takes the template's context or evaluation context behind a budget: charged, its arguments
    checked, its result's size checked."""
    checked = filter_is_checked(name)

    def bind(budget: Budget, environment: Environment) -> Bound:
        def guarded(first: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
            budget.charge()
            if checked:
                value = check_filter(budget, name, value, args, kwargs)
            return budget.check_result(func(first, value, *args, **kwargs))

        if pass_arg is _PassArg.context:
            return Bound(pass_context(guarded), pass_context(guarded))

        @pass_context
        def full(context: Context, value: Any, *args: Any, **kwargs: Any) -> Any:
            return guarded(context.eval_ctx, value, *args, **kwargs)

        return Bound(full, pass_eval_context(guarded))

    return bind


def _guarded_replace(budget: Budget, environment: Environment) -> Bound:
    """Jinja2's `replace` behind the budget. Its common case (strings, no count, autoescape off) is what the
    filter does then, `str.replace`, its size checked first as `check_filter` checks it."""
    limit = budget.limits.max_output

    @pass_eval_context
    def positional(eval_ctx: EvalContext, value: Any, *args: Any) -> Any:
        budget.charge()
        if (type(value) is str and len(args) == 2 and type(args[0]) is str and type(args[1]) is str
                and not eval_ctx.autoescape):
            old, new = args
            if len(value) + (len(value) // len(old) if old else len(value) + 1) * len(new) > limit:
                check_filter(budget, "replace", value, args, _NO_KEYWORDS)
            return value.replace(old, new)
        value = check_filter(budget, "replace", value, args, _NO_KEYWORDS)
        return budget.check_result(do_replace(eval_ctx, value, *args))

    @pass_context
    def full(context: Context, value: Any, *args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            return positional(context.eval_ctx, value, *args)
        budget.charge()
        value = check_filter(budget, "replace", value, args, kwargs)
        return budget.check_result(do_replace(context.eval_ctx, value, *args, **kwargs))

    return Bound(full, positional)


_STRINGS = frozenset({str})


def _same(value: str) -> str:
    return value


_SAME = _same  # a filter that gives a plain string back as it is (`string`, of a string)
def _dictsort(value: Any) -> list[tuple[str, Any]] | None:
    """`dictsort` of a mapping whose keys are all strings; None for anything else (a parameter's, sorted once per
    render: a template often sorts the same one in several places, or in a loop)."""
    if type(value) is Values:
        found = value.derived(_sorted_items)
        return None if found is None else list(found)
    return _sorted_items(value) if type(value) is dict or isinstance(value, Mapping) else None


def _sorted_items(value: Mapping[Any, Any]) -> list[tuple[str, Any]] | None:
    items = [(key, value[key]) for key in value]  # what `value.items()` yields, without its generator
    return _by_lowered(items, [key for key, _ in items])


def _sort(value: Any) -> list[str] | None:
    """`sort` of a list of strings; None for anything else (a stable sort by `str.lower`, as Jinja2 sorts them)."""
    return sorted(value, key=str.lower) if type(value) is list and _STRINGS.issuperset(map(type, value)) else None


def _by_lowered(items: list[Any], keys: list[Any]) -> list[Any] | None:
    """`items` sorted by their `keys` in lower case, ties kept in order (as Jinja2 sorts); None unless every key is
    a string."""
    if not _STRINGS.issuperset(map(type, keys)):
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
# Filters whose work on an int (not a bool), with no arguments, is one native call.
_ON_INTS: Mapping[Callable[..., Any], Callable[[int], str]] = {soft_str: str}
# Filters with a shortcut for some values, given no arguments (None: it does not apply).
_WITHOUT_ARGUMENTS: Mapping[Callable[..., Any], Callable[[Any], Any]] = {do_dictsort: _dictsort, do_sort: _sort}

# Built once: what each environment binds to its budget.
_BINDERS: Mapping[str, Binder] = {
    name: guarded_filter(name, f) for name, f in {**DEFAULT_FILTERS, **FILTERS}.items() if name not in _DROPPED_FILTERS
}
