"""The Kubernetes CEL libraries CEL itself lacks: list helpers, regex find, and quantities.

(The lists' `indexOf`/`lastIndexOf`, url, ip, cidr and semver are in `engine.cel.extras`.)

Mirrors k8s.io/apiserver/pkg/cel/library (lists.go, regex.go, quantity.go). A quantity is carried as a
one-entry map holding its exact value, so `==` compares values (`quantity('1') == quantity('1000m')`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from cel_expr_python import cel

from engine import quantity
from engine.cel import extras
from engine.cel.extras import LibraryError, parses
from engine.cel.extras import function as _global
from engine.cel.extras import member as _member

__all__ = ["QUANTITY_KEY", "declarations"]

T = cel.Type
QUANTITY_KEY = "kubernetes.Quantity"
QUANTITY_TYPE = T.Map(T.STRING, T.STRING)


def _is_sorted(items: Sequence[Any]) -> bool:
    return all(a <= b for a, b in itertools.pairwise(items))


def _sum(items: Sequence[Any]) -> Any:
    return sum(items[1:], items[0]) if items else 0


def _extreme(name: str, pick: Callable[..., Any]) -> Callable[[Sequence[Any]], Any]:
    def extreme(items: Sequence[Any]) -> Any:
        if not items:
            raise LibraryError(f"{name} called on empty list")
        return pick(items)
    return extreme


def _find(text: str, pattern: str) -> str:
    found = re.search(pattern, text)
    return found.group(0) if found else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    matches = [m.group(0) for m in re.finditer(pattern, text)]
    return matches if limit < 0 else matches[:limit]


def _as_quantity(value: Any) -> quantity.Quantity:
    return quantity.Quantity(Fraction(str(value[QUANTITY_KEY])), quantity.Format.DECIMAL_SI)


def _quantity_value(q: quantity.Quantity) -> dict[str, str]:
    value = q.value
    return {QUANTITY_KEY: str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"}


def _quantity(text: str) -> dict[str, str]:
    try:
        return _quantity_value(quantity.parse(text))
    except quantity.QuantityError as e:
        raise LibraryError(str(e)) from e


def _as_integer(value: Any) -> int:
    amount = _as_quantity(value).value
    if amount.denominator != 1 or not -(1 << 63) <= amount <= (1 << 63) - 1:
        raise LibraryError("cannot convert value to integer")
    return int(amount)


def _plus(value: Any, other: Any) -> dict[str, str]:
    return _quantity_value(_as_quantity(value).add(_as_quantity(other)))


def _minus(value: Any, other: Any) -> dict[str, str]:
    return _quantity_value(_as_quantity(value).sub(_as_quantity(other)))


def _int_quantity(number: int) -> dict[str, str]:
    return {QUANTITY_KEY: str(number)}


def _compare(value: Any, other: Any) -> int:
    """Quantities and semvers share these comparisons (both are carried as one-entry maps)."""
    if extras.SEMVER_KEY in value and extras.SEMVER_KEY in other:
        a, b = extras.semver_key(value), extras.semver_key(other)
        return (a > b) - (a < b)
    return _as_quantity(value).compare(_as_quantity(other))


def declarations() -> list[cel.FunctionDecl]:
    """The function declarations (with their implementations) added to every kplan CEL environment."""
    dyn_list, q = T.List(T.DYN), QUANTITY_TYPE
    compare = {"isGreaterThan": lambda a, b: _compare(a, b) > 0, "isLessThan": lambda a, b: _compare(a, b) < 0,
               "compareTo": _compare}
    decls = [
        cel.FunctionDecl("isSorted", [_member("list_is_sorted", T.BOOL, [dyn_list], _is_sorted)]),
        cel.FunctionDecl("sum", [_member("list_sum", T.DYN, [dyn_list], _sum)]),
        cel.FunctionDecl("min", [_member("list_min", T.DYN, [dyn_list], _extreme("min", min))]),
        cel.FunctionDecl("max", [_member("list_max", T.DYN, [dyn_list], _extreme("max", max))]),
        cel.FunctionDecl("find", [_member("string_find", T.STRING, [T.STRING, T.STRING], _find)]),
        cel.FunctionDecl("findAll", [
            _member("string_find_all", T.List(T.STRING), [T.STRING, T.STRING], _find_all),
            _member("string_find_all_n", T.List(T.STRING), [T.STRING, T.STRING, T.INT], _find_all)]),
        cel.FunctionDecl("quantity", [_global("string_to_quantity", q, [T.STRING], _quantity)]),
        cel.FunctionDecl("isQuantity", [_global("is_quantity", T.BOOL, [T.STRING], parses(_quantity))]),
        cel.FunctionDecl("sign", [_member("quantity_sign", T.INT, [q], lambda a: _as_quantity(a).sign)]),
        cel.FunctionDecl("isInteger", [_member("quantity_is_integer", T.BOOL, [q],
                                               lambda a: _as_quantity(a).value.denominator == 1)]),
        cel.FunctionDecl("asInteger", [_member("quantity_as_integer", T.INT, [q], _as_integer)]),
        cel.FunctionDecl("asApproximateFloat", [_member("quantity_as_float", T.DOUBLE, [q],
                                                        lambda a: float(_as_quantity(a).value))]),
        cel.FunctionDecl("add", [_member("quantity_add", q, [q, q], _plus),
                                 _member("quantity_add_int", q, [q, T.INT],
                                         lambda a, n: _plus(a, _int_quantity(n)))]),
        cel.FunctionDecl("sub", [_member("quantity_sub", q, [q, q], _minus),
                                 _member("quantity_sub_int", q, [q, T.INT],
                                         lambda a, n: _minus(a, _int_quantity(n)))]),
    ]
    decls += [cel.FunctionDecl(name, [_member(f"quantity_{name}", T.INT if name == "compareTo" else T.BOOL,
                                              [q, q], impl)]) for name, impl in compare.items()]
    return decls
