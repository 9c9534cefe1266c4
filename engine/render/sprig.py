"""sprig's functions (v2, as KUDO's renderer had them), with sprig's semantics, for converted KUDO templates.

Numbers follow sprig's toInt64: numbers truncate, strings are read as base-10 integers and anything
unreadable is 0 (`int "3.7"` is 0); arithmetic is int64 with Go's truncating division; `indent`
pads the first line too; `b64dec` of bad input returns Go's error text; `toYaml` is yaml.v2's output.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from jinja2.runtime import Undefined

from engine.render import gofmt, goyaml
from engine.render.gofmt import GoError
from engine.render.govalues import defined as _defined
from engine.render.govalues import kind_of as _kind
from engine.render.govalues import truth
from engine.render.values import plain

__all__ = ["FUNCTIONS", "MAX_LIST"]

MAX_LIST = 100_000  # until/untilStep make at most this many numbers


# -- numbers

def _parse_int(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64), which sprig's toInt64 applies to strings: "08" is 8, "0x10" and "3.7" fail."""
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def to_int(value: Any) -> int:
    """sprig's int/int64 (toInt64): numbers truncated, strings read as base-10 integers, anything else 0."""
    _defined(value)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return 0 if math.isnan(value) or math.isinf(value) else int(value)
    if isinstance(value, str):
        parsed = _parse_int(value)
        return 0 if parsed is None else parsed
    return 0


def to_float(value: Any) -> float:
    _defined(value)
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value) if re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(Inf|inf|NaN)", value) \
                else 0.0
        except ValueError:
            return 0.0
    return 0.0


def add(*values: Any) -> int:
    return sum(to_int(v) for v in values)


def add1(value: Any) -> int:
    return to_int(value) + 1


def sub(a: Any, b: Any) -> int:
    return to_int(a) - to_int(b)


def mul(first: Any, *values: Any) -> int:
    product = to_int(first)
    for v in values:
        product *= to_int(v)
    return product


def _go_div(a: int, b: int) -> int:
    if b == 0:
        raise GoError("runtime error: integer divide by zero")
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def div(a: Any, b: Any) -> int:
    return _go_div(to_int(a), to_int(b))


def mod(a: Any, b: Any) -> int:
    x, y = to_int(a), to_int(b)
    return x - _go_div(x, y) * y


def max_(first: Any, *values: Any) -> int:
    return max([to_int(first), *(to_int(v) for v in values)])


def min_(first: Any, *values: Any) -> int:
    return min([to_int(first), *(to_int(v) for v in values)])


def _int_arg(name: str, value: Any) -> int:
    _defined(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise GoError(f"wrong type for value in {name}; expected int; got {_kind(value)}")
    return value


def until(count: Any) -> list[int]:
    n = _int_arg("until", count)
    return until_step(0, n, 1 if n >= 0 else -1)


def until_step(start: Any, stop: Any, step: Any) -> list[int]:
    a, b, s = (_int_arg("untilStep", v) for v in (start, stop, step))
    if s == 0 or (b > a and s < 0) or (b < a and s > 0):
        return []
    numbers = range(a, b, s)
    if len(numbers) > MAX_LIST:
        raise GoError(f"untilStep would make {len(numbers)} numbers, more than {MAX_LIST}")
    return list(numbers)


# -- strings

def to_string(value: Any) -> str:
    """sprig's strval: strings as they are, anything else as %v."""
    _defined(value)
    return value if isinstance(value, str) else gofmt.value_text(value, False)


def trim(value: Any) -> str:
    return to_string(value).strip(" \t\n\r\v\f\u0085\u00a0")


def trim_all(cut: Any, value: Any) -> str:
    return to_string(value).strip(to_string(cut))


def trim_prefix(prefix: Any, value: Any) -> str:
    return to_string(value).removeprefix(to_string(prefix))


def trim_suffix(suffix: Any, value: Any) -> str:
    return to_string(value).removesuffix(to_string(suffix))


def indent(spaces: Any, value: Any) -> str:
    """sprig's indent: every line, the first one included, gets `spaces` spaces."""
    pad = " " * _int_arg("indent", spaces)
    return pad + to_string(value).replace("\n", "\n" + pad)


def nindent(spaces: Any, value: Any) -> str:
    return "\n" + indent(spaces, value)


def quote(*values: Any) -> str:
    _defined(*values)
    return " ".join(gofmt.quote(to_string(v)) for v in values if v is not None)


def squote(*values: Any) -> str:
    _defined(*values)
    return " ".join(f"'{to_string(v)}'" for v in values if v is not None)


def upper(value: Any) -> str:
    return to_string(value).upper()


def lower(value: Any) -> str:
    return to_string(value).lower()


def title(value: Any) -> str:
    return re.sub(r"(^|\s)(\S)", lambda m: m.group(1) + m.group(2).upper(), to_string(value))


def replace(old: Any, new: Any, value: Any) -> str:
    return to_string(value).replace(to_string(old), to_string(new))


def contains(part: Any, value: Any) -> bool:
    return to_string(part) in to_string(value)


def has_prefix(prefix: Any, value: Any) -> bool:
    return to_string(value).startswith(to_string(prefix))


def has_suffix(suffix: Any, value: Any) -> bool:
    return to_string(value).endswith(to_string(suffix))


def repeat(count: Any, value: Any) -> str:
    n = _int_arg("repeat", count)
    if n * len(to_string(value)) > 1_000_000:
        raise GoError("repeat would make a string over 1 MB")
    return to_string(value) * max(n, 0)


def trunc(count: Any, value: Any) -> str:
    n, text = _int_arg("trunc", count), to_string(value)
    return text[:n] if n >= 0 else text[max(len(text) + n, 0):]


def split_list(sep: Any, value: Any) -> list[str]:
    return to_string(value).split(to_string(sep))


def join(sep: Any, values: Any) -> str:
    _defined(values)
    items = values if isinstance(values, list | tuple) else [values]
    return to_string(sep).join(to_string(v) for v in items if v is not None)


def b64enc(value: Any) -> str:
    return base64.b64encode(to_string(value).encode()).decode()


def b64dec(value: Any) -> str:
    """sprig's b64dec: the decoded text, or Go's error message when the input is not base64."""
    text = to_string(value)
    try:
        return base64.b64decode(text.encode(), validate=True).decode("utf-8", errors="replace")
    except (binascii.Error, ValueError):
        return f"illegal base64 data at input byte {_bad_base64_byte(text)}"


def _bad_base64_byte(text: str) -> int:
    alphabet = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    for i, char in enumerate(text):
        if char == "=":
            return i if (len(text) % 4 or i < len(text) - 2) else len(text)
        if char not in alphabet:
            return i
    return len(text) - len(text) % 4 if len(text) % 4 else len(text)


def sha256sum(value: Any) -> str:
    return hashlib.sha256(to_string(value).encode()).hexdigest()


# -- defaults, lists, maps, encodings

def empty(value: Any) -> bool:
    _defined(value)
    return not truth(value)


def default(fallback: Any, *given: Any) -> Any:
    _defined(fallback, *given)
    return fallback if not given or empty(given[0]) else given[0]


def coalesce(*values: Any) -> Any:
    _defined(*values)
    return next((v for v in values if not empty(v)), None)


def ternary(yes: Any, no: Any, condition: Any) -> Any:
    _defined(yes, no)
    if not isinstance(condition, bool):
        raise GoError(f"wrong type for value in ternary; expected bool; got {_kind(condition)}")
    return yes if condition else no


def list_(*values: Any) -> list[Any]:
    _defined(*values)
    return list(values)


def dict_(*pairs: Any) -> dict[str, Any]:
    _defined(*pairs)
    values = list(pairs) + ([""] if len(pairs) % 2 else [])
    return {to_string(values[i]): values[i + 1] for i in range(0, len(values), 2)}


def has(needle: Any, haystack: Any) -> bool:
    _defined(needle, haystack)
    return isinstance(haystack, list | tuple) and any(_kind(v) == _kind(needle) and v == needle for v in haystack)


def keys(*maps: Any) -> list[str]:
    _defined(*maps)
    return [k for m in maps if isinstance(m, Mapping) for k in m]


def has_key(mapping: Any, key: Any) -> bool:
    _defined(mapping)
    return isinstance(mapping, Mapping) and key in mapping


def first(values: Any) -> Any:
    _defined(values)
    return values[0] if isinstance(values, list | tuple) and values else None


def last(values: Any) -> Any:
    _defined(values)
    return values[-1] if isinstance(values, list | tuple) and values else None


def to_yaml(value: Any) -> str:
    _defined(value)
    return goyaml.yaml_marshal(plain(value))


def to_json(value: Any) -> str:
    _defined(value)
    return json.dumps(plain(value), separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def fail(message: Any) -> Any:
    raise GoError(to_string(message))


def required(message: Any, value: Any) -> Any:
    if isinstance(value, Undefined) or value is None or (isinstance(value, str) and value == ""):
        raise GoError(to_string(message))
    return value


FUNCTIONS: Mapping[str, Callable[..., Any]] = {
    "int": to_int, "int64": to_int, "float64": to_float, "atoi": to_int, "toString": to_string,
    "add": add, "add1": add1, "sub": sub, "mul": mul, "div": div, "mod": mod, "max": max_, "min": min_,
    "until": until, "untilStep": until_step,
    "trim": trim, "trimAll": trim_all, "trimPrefix": trim_prefix, "trimSuffix": trim_suffix,
    "indent": indent, "nindent": nindent, "quote": quote, "squote": squote, "upper": upper, "lower": lower,
    "title": title, "replace": replace, "contains": contains, "hasPrefix": has_prefix, "hasSuffix": has_suffix,
    "repeat": repeat, "trunc": trunc, "splitList": split_list, "join": join,
    "b64enc": b64enc, "b64dec": b64dec, "sha256sum": sha256sum,
    "empty": empty, "default": default, "coalesce": coalesce, "ternary": ternary, "fail": fail,
    "required": required, "list": list_, "dict": dict_, "has": has, "keys": keys, "hasKey": has_key,
    "first": first, "last": last, "toYaml": to_yaml, "toJson": to_json,
}
