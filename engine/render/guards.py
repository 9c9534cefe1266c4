"""Size estimates that stop amplifying operations before native code builds a huge value."""

from __future__ import annotations

import re
import string
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from engine.render.limits import Budget, LimitExceeded, measure

__all__ = [
    "check_binop", "check_filter", "check_format", "check_method", "check_printf", "filter_is_checked",
    "filter_measures_only", "materialize",
]


def check_binop(budget: Budget, operator: str, left: Any, right: Any) -> None:
    """Refuse `left <operator> right` when its result would be over a limit."""
    if operator == "*":
        _check_repeat(budget, left, right)
        _check_repeat(budget, right, left)
        if _is_int(left) and _is_int(right):
            budget.check_int_bits(left.bit_length() + right.bit_length())
    elif operator == "**" and _is_int(left) and _is_int(right) and right > 0 and abs(left) > 1:
        budget.check_int_bits(left.bit_length() * right)
    elif operator == "+" and isinstance(left, str | bytes) and isinstance(right, str | bytes):
        budget.check_text(len(left) + len(right))
    elif operator == "+" and isinstance(left, list | tuple) and isinstance(right, list | tuple):
        budget.check_items(len(left) + len(right))
    elif operator == "%" and isinstance(left, str):
        check_printf(budget, left)
        measure(right, budget)


def _check_repeat(budget: Budget, sequence: Any, times: Any) -> None:
    if not _is_int(times):
        return
    if isinstance(sequence, str | bytes):
        budget.check_text(len(sequence) * max(times, 0))
    elif isinstance(sequence, list | tuple):
        budget.check_items(len(sequence) * max(times, 0))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_PRINTF_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?[a-zA-Z%]")


def check_printf(budget: Budget, fmt: str) -> None:
    """Refuse printf-style field widths and precisions over the output limit (and `*`)."""
    for width, precision in _PRINTF_SPEC.findall(fmt):
        for number in (width, precision):
            if number == "*":
                raise LimitExceeded("printf-style '*' widths are not allowed in templates")
            if number:
                budget.check_text(int(number), "a format width")


def check_format(budget: Budget, fmt: str) -> None:
    """Refuse `str.format` specifications with nested fields or widths over the output limit."""
    try:
        fields = list(string.Formatter().parse(fmt))
    except ValueError:
        return  # str.format will raise the same error
    for _literal, _name, spec, _conversion in fields:
        if spec and "{" in spec:
            raise LimitExceeded("nested format specifications are not allowed in templates")
        for number in re.findall(r"\d+", spec or ""):
            budget.check_text(int(number), "a format width")


def materialize(budget: Budget, values: Iterable[Any]) -> list[Any]:
    """A list of the items, charging one operation each."""
    if isinstance(values, list | tuple):
        budget.charge(1 + len(values) // 64)
        return list(values)
    items = []
    for item in values:
        budget.charge()
        items.append(item)
        budget.check_items(len(items))
    return items


def check_method(budget: Budget, method: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[Any, ...]:
    """Refuse amplifying methods of str, bytes and numbers; returns the (materialized) args."""
    owner = getattr(method, "__self__", None)
    if not isinstance(method, types.BuiltinMethodType) or not isinstance(owner, str | bytes | int | float):
        return args
    for value in (*args, *kwargs.values()):
        if _is_int(value):
            budget.check_text(abs(value), "a size argument")
    name = method.__name__
    if isinstance(owner, str | bytes):
        if name == "join" and args:
            parts = materialize(budget, args[0])
            budget.check_text(sum(measure(part, budget) for part in parts) + len(owner) * len(parts))
            return (parts, *args[1:])
        if name in ("format", "format_map") and isinstance(owner, str):
            check_format(budget, owner)
            measure([*args, *kwargs.values()], budget)
        elif name == "replace" and len(args) >= 2:
            budget.check_text(_replaced_size(owner, args[0], args[1]))
        elif name == "expandtabs":
            tabsize = args[0] if args else kwargs.get("tabsize", 8)
            tabs = owner.count("\t") if isinstance(owner, str) else owner.count(b"\t")
            budget.check_text(len(owner) + tabs * int(tabsize))
        elif name == "translate" and args and isinstance(args[0], Mapping):
            longest = max((measure(value, budget) for value in args[0].values()), default=1)
            budget.check_text(len(owner) * max(longest, 1))
    return args


def _replaced_size(text: str | bytes, old: Any, new: Any) -> int:
    if not isinstance(old, str | bytes) or not isinstance(new, str | bytes):
        return len(text)
    occurrences = len(text) + 1 if not old else len(text) // len(old)
    return len(text) + occurrences * len(new)


FilterCheck = Callable[[Budget, Any, tuple[Any, ...], Mapping[str, Any]], tuple[Any, ...] | None]


def filter_is_checked(name: str) -> bool:
    """Whether `check_filter` checks anything for the filter `name` (the others need only its charge and the
    check of its result)."""
    return name in _MEASURED or name in _FILTER_CHECKS


def filter_measures_only(name: str) -> bool:
    """Whether all `check_filter` does for the filter `name` is to measure its value."""
    return name in _MEASURED and name not in _ITERATING and name not in _FILTER_CHECKS


def check_filter(budget: Budget, name: str, value: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
    """Refuse a filter call whose result would be over a limit; returns the (materialized) value."""
    if name in _MEASURED:
        if name in _ITERATING and not isinstance(value, str | bytes | Mapping):
            value = materialize(budget, value)
        measure(value, budget)
    check = _FILTER_CHECKS.get(name)
    if check is not None:
        check(budget, value, args, kwargs)
    return value


def _arg(args: tuple[Any, ...], kwargs: Mapping[str, Any], index: int, name: str, default: Any) -> Any:
    return args[index] if len(args) > index else kwargs.get(name, default)


def _lines(value: Any) -> int:
    return str(value).count("\n") + 1


def _check_center(budget: Budget, value: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    width = _arg(args, kwargs, 0, "width", 80)
    if _is_int(width):
        budget.check_text(width)


def _check_indent(budget: Budget, value: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    width = _arg(args, kwargs, 0, "width", 4)
    size = len(width) if isinstance(width, str) else width if _is_int(width) else 0
    budget.check_text(len(str(value)) + _lines(value) * size)


def _check_wordwrap(budget: Budget, value: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    wrapstring = _arg(args, kwargs, 2, "wrapstring", None)
    if isinstance(wrapstring, str) and len(wrapstring) > 1:
        budget.check_text(len(str(value)) * (1 + len(wrapstring)))


def _check_replace(budget: Budget, value: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    if len(args) >= 2 and type(value) is str and type(args[0]) is str and type(args[1]) is str:  # the common case
        budget.check_text(_replaced_size(value, args[0], args[1]))
        return
    old, new = _arg(args, kwargs, 0, "old", ""), _arg(args, kwargs, 1, "new", "")
    budget.check_text(_replaced_size(str(value), str(old), str(new)))


def _check_format(budget: Budget, value: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    check_printf(budget, str(value))
    measure(list(args) + list(kwargs.values()), budget)


def _check_count(limit: Callable[[Budget], int], index: int, name: str) -> FilterCheck:
    def check(budget: Budget, value: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
        count = _arg(args, kwargs, index, name, 0)
        if _is_int(count) and count > limit(budget):
            raise LimitExceeded(f"{name} of {count} exceeds the limit of {limit(budget)}")

    return check


def _check_sum(budget: Budget, value: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    start = _arg(args, kwargs, 1, "start", 0)
    if not isinstance(start, list | tuple | str):
        return
    size, copied = len(start), 0
    for item in value:
        size += len(item) if isinstance(item, list | tuple | str) else 1
        copied += size
    budget.check_items(copied, "summing sequences copies")


_MEASURED = frozenset(
    {"join", "string", "pprint", "tojson", "toyaml", "b64encode", "sha256", "quote", "shquote", "urlencode",
     "xmlattr", "sum", "format"}
)
_ITERATING = frozenset({"join", "sum"})

_FILTER_CHECKS: Mapping[str, FilterCheck] = {
    "center": _check_center,
    "indent": _check_indent,
    "wordwrap": _check_wordwrap,
    "replace": _check_replace,
    "format": _check_format,
    "batch": _check_count(lambda budget: budget.limits.max_items, 0, "linecount"),
    "slice": _check_count(lambda budget: budget.limits.max_items, 0, "slices"),
    "sum": _check_sum,
}
