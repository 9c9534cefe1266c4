"""The `go` functions of converted KUDO templates: Go text/template's built-ins, sprig's, and the translation's own.

A KUDO package's templates were Go templates with sprig v2 (as KUDO's renderer set them up);
`kplan package convert --from kudo` turns them into Jinja2 that calls these as `go.NAME(...)`.
Each behaves as its Go counterpart does on the values kplan renders with, including where Go
differs from Python: `eq` refuses to compare a string with a number, `index` of a missing map key
is nil, a missing value prints `<no value>`, `range` over a map goes in sorted key order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from engine.render import gofmt, sprig
from engine.render.gofmt import GoError
from engine.render.govalues import defined as _defined
from engine.render.govalues import kind_of as _kind
from engine.render.govalues import truth
from engine.render.sprig import to_string

__all__ = ["FUNCTIONS", "GoError", "range_items", "truth"]


# -- Go's built-ins

def _arguments(name: str, args: tuple[Any, ...]) -> None:
    if not args:
        raise GoError(f"wrong number of args for {name}: want at least 1 got 0")


def and_(*args: Any) -> Any:
    """The first false argument, else the last (every argument evaluated, as in the Go KUDO was built with)."""
    _arguments("and", args)
    for arg in args[:-1]:
        if not truth(arg):
            return arg
    _defined(args[-1])
    return args[-1]


def or_(*args: Any) -> Any:
    """The first true argument, else the last."""
    _arguments("or", args)
    for arg in args[:-1]:
        if truth(arg):
            return arg
    _defined(args[-1])
    return args[-1]


def not_(value: Any) -> bool:
    return not truth(value)


def eq(first: Any, *others: Any) -> bool:
    """True when `first` equals any of `others`; values of different kinds are an error, as in Go."""
    _defined(first, *others)
    if not others:
        raise GoError("missing argument for comparison")
    return any(_equal(first, other) for other in others)


def _equal(a: Any, b: Any) -> bool:
    ka, kb = _kind(a), _kind(b)
    if ka == "nil" or kb == "nil":
        return ka == kb
    if ka in ("map", "slice", "other") or kb in ("map", "slice", "other"):
        raise GoError(f"non-comparable type {gofmt.value_text(a if ka in ('map', 'slice', 'other') else b, False)}")
    if ka != kb:
        raise GoError(f"incompatible types for comparison: {ka} and {kb}")
    return bool(a == b)


def ne(a: Any, b: Any) -> bool:
    return not eq(a, b)


def _ordered(a: Any, b: Any) -> None:
    _defined(a, b)
    ka, kb = _kind(a), _kind(b)
    if ka not in ("int", "float", "string") or kb not in ("int", "float", "string"):
        raise GoError(f"invalid type for comparison: {ka if ka not in ('int', 'float', 'string') else kb}")
    if ka != kb:
        raise GoError(f"incompatible types for comparison: {ka} and {kb}")


def lt(a: Any, b: Any) -> bool:
    _ordered(a, b)
    return bool(a < b)


def le(a: Any, b: Any) -> bool:
    _ordered(a, b)
    return bool(a <= b)


def gt(a: Any, b: Any) -> bool:
    _ordered(a, b)
    return bool(a > b)


def ge(a: Any, b: Any) -> bool:
    _ordered(a, b)
    return bool(a >= b)


def len_(value: Any) -> int:
    _defined(value)
    if isinstance(value, str):
        return len(value.encode())
    if isinstance(value, list | tuple | Mapping):
        return len(value)
    raise GoError(f"len of type {_kind(value)}")


def index(value: Any, *keys: Any) -> Any:
    """Go's index: list elements by position (in range), map entries by key (missing: nil)."""
    _defined(value, *keys)
    for key in keys:
        if value is None:
            raise GoError("index of untyped nil")
        if isinstance(value, list | tuple):
            if not isinstance(key, int) or isinstance(key, bool):
                raise GoError(f"cannot index slice/array with type {_kind(key)}")
            if not 0 <= key < len(value):
                raise GoError(f"error calling index: index out of range: {key}")
            value = value[key]
        elif isinstance(value, Mapping):
            value = value.get(key)
        elif isinstance(value, str):
            raw = value.encode()
            if not isinstance(key, int) or not 0 <= key < len(raw):
                raise GoError(f"error calling index: index out of range: {key}")
            value = raw[key]
        else:
            raise GoError(f"can't index item of type {_kind(value)}")
    return value


def field(value: Any, *names: str) -> Any:
    """`.A.B` on a value: map entries (a missing key is an error, as KUDO's missingkey=error makes it)."""
    _defined(value)
    for name in names:
        if isinstance(value, Mapping):
            if name not in value:
                raise GoError(f"map has no entry for key {name!r}")
            value = value[name]
        elif value is None:
            raise GoError(f"nil pointer evaluating interface {{}}.{name}")
        else:
            raise GoError(f"can't evaluate field {name} in type {_kind(value)}")
    return value


def no_entry(name: str) -> Any:
    raise GoError(f"map has no entry for key {name!r}")


def print_(*args: Any) -> str:
    _defined(*args)
    return gofmt.sprint(*args)


def println(*args: Any) -> str:
    _defined(*args)
    return gofmt.sprintln(*args)


def printf(template: Any, *args: Any) -> str:
    _defined(template, *args)
    return gofmt.printf(str(template), *args)


def output(value: Any) -> str:
    """What `{{ value }}` prints."""
    _defined(value)
    return gofmt.value_text(value)


def range_items(value: Any) -> Iterator[tuple[Any, Any]]:
    """(key, element) pairs of `range`: list positions, or map keys in Go's sorted order; nil is empty."""
    _defined(value)
    if value is None:
        return iter(())
    if isinstance(value, Mapping):
        return iter([(k, value[k]) for k in sorted(value, key=_sort_key)])
    if isinstance(value, list | tuple):
        return iter(enumerate(value))
    if isinstance(value, int) and not isinstance(value, bool):
        return iter((i, i) for i in range(value))
    raise GoError(f"range can't iterate over {gofmt.value_text(value, False)}")


def _sort_key(key: Any) -> Any:
    return (0, key, "") if isinstance(key, int | float) and not isinstance(key, bool) else (1, 0, str(key))


_BOOL_WORDS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
               "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def parse_bool(value: Any) -> bool:
    """strconv.ParseBool, which KUDO's Toggle task applies to its parameter."""
    _defined(value)
    if isinstance(value, bool):
        return value
    text = to_string(value)
    if text not in _BOOL_WORDS:
        raise GoError(f'strconv.ParseBool: parsing "{text}": invalid syntax')
    return _BOOL_WORDS[text]


def floats(value: Any) -> Any:
    """A KUDO array or map parameter as KUDO's templates saw it: read through JSON, so every number is a float."""
    _defined(value)
    if isinstance(value, Mapping):
        return {k: floats(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [floats(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


FUNCTIONS: Mapping[str, Callable[..., Any]] = {
    # text/template's built-ins
    "and": and_, "or": or_, "not": not_, "eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge,
    "len": len_, "index": index, "print": print_, "printf": printf, "println": println,
    # sprig
    **sprig.FUNCTIONS,
    # what the translation itself calls
    "output": output, "truth": truth, "field": field, "no_entry": no_entry, "range_items": range_items,
    "parse_bool": parse_bool, "floats": floats,
}
