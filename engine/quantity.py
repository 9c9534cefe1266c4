"""Kubernetes resource quantities (`500m`, `1Gi`, `1e3`): parsing, canonical form, comparison and arithmetic.

A port of k8s.io/apimachinery/pkg/api/resource (Quantity): the same scanner, suffixes, rounding (up to the
nanounit on parse; `round_up` for the milliunit of ResourceLists) and the canonical string the API server
writes back, including its habit of keeping the text a client sent when it was already canonical.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import StrEnum
from fractions import Fraction

__all__ = ["Format", "Quantity", "QuantityError", "canonical", "parse"]

SPLIT_PATTERN = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
FORMAT_WRONG = f"quantities must match the regular expression '{SPLIT_PATTERN}'"
NUMERIC_WRONG = "unable to parse numeric part of quantity"
SUFFIX_WRONG = "unable to parse quantity's suffix"
MAX_INT64 = (1 << 63) - 1
NANO, MILLI = -9, -3
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")


class Format(StrEnum):
    DECIMAL_EXPONENT = "DecimalExponent"
    BINARY_SI = "BinarySI"
    DECIMAL_SI = "DecimalSI"


_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXPONENT = {v: k for k, v in _DECIMAL.items()}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_BY_EXPONENT = {v: k for k, v in _BINARY.items()}


class QuantityError(ValueError):
    """A string that is not a quantity; the message is the API server's."""


@dataclass(frozen=True)
class Quantity:
    """An exact value with the format it was written in; `text` is kept when the input was already canonical,
    `scale` is the power of ten of the int64 fast path (None when the value took the big-decimal path)."""

    value: Fraction
    format: Format
    text: str | None = None
    scale: int | None = None

    def __str__(self) -> str:
        return self.text if self.text is not None else _canonical(self.value, self.format)

    def round_up(self, exponent: int = MILLI) -> Quantity:
        """The value rounded away from zero to 10**exponent (SetDefaults_ResourceList uses the milliunit)."""
        if self.scale is not None and self.scale >= exponent:
            return self
        return Quantity(_round_away(self.value, exponent), self.format)

    def compare(self, other: Quantity) -> int:
        return (self.value > other.value) - (self.value < other.value)

    def add(self, other: Quantity) -> Quantity:
        return Quantity(self.value + other.value, other.format if self.value == 0 else self.format)

    def sub(self, other: Quantity) -> Quantity:
        return Quantity(self.value - other.value, other.format if self.value == 0 else self.format)

    @property
    def sign(self) -> int:
        return (self.value > 0) - (self.value < 0)


def _round_away(value: Fraction, exponent: int) -> Fraction:
    unit = Fraction(10) ** exponent
    steps = value / unit
    whole = steps.numerator // steps.denominator if steps >= 0 else -((-steps.numerator) // steps.denominator)
    if whole != steps:
        whole += 1 if value > 0 else -1
    return whole * unit


@dataclass(frozen=True)
class _Parts:
    positive: bool
    value: str
    num: str
    denom: str
    suffix: str


def _scan(text: str) -> _Parts:
    """parseQuantityString: sign, numerator (leading zeros dropped), denominator, suffix."""
    positive, pos, end = True, 0, len(text)
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return _Parts(positive, "0", "0", "", "")
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    if pos >= end:
        return _Parts(positive, text, num, "", "")
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return _Parts(positive, text, num, denom, "")
    value, suffix_start = text[:pos], pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(FORMAT_WRONG)
    return _Parts(positive, value, num, denom, text[suffix_start:])


def _interpret(suffix: str) -> tuple[int, int, Format]:
    """(base, exponent, format) of a suffix."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix], Format.DECIMAL_SI
    if suffix in _BINARY:
        return 2, _BINARY[suffix], Format.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[+-]?[0-9]+", suffix[1:]):
        exponent = int(suffix[1:])
        if -(1 << 63) <= exponent <= MAX_INT64:
            return 10, exponent, Format.DECIMAL_EXPONENT
    raise QuantityError(SUFFIX_WRONG)


@functools.lru_cache(maxsize=4096)
def parse(text: str) -> Quantity:
    """ParseQuantity: the value, rounded up to the nanounit, and the format its suffix implies."""
    if not text:
        raise QuantityError(FORMAT_WRONG)
    if text == "0":
        return Quantity(Fraction(0), Format.DECIMAL_SI, text, 0)
    parts = _scan(text)
    base, exponent, fmt = _interpret(parts.suffix)
    fast = _fast_path(text, parts, base, exponent, fmt)
    if fast is not None:
        return fast
    digits = parts.value.lstrip("+-")
    if not re.fullmatch(r"[0-9]*\.?[0-9]*", digits) or not digits.strip("."):
        raise QuantityError(NUMERIC_WRONG)
    whole, _, fraction = digits.partition(".")
    amount = Fraction(int(whole + fraction or "0"), 10 ** len(fraction))
    amount *= Fraction(10) ** exponent if base == 10 else 2**exponent
    if amount:
        amount = _round_away(amount, NANO)
    if fmt == Format.BINARY_SI and amount > MAX_INT64:
        amount = Fraction(MAX_INT64)
    if fmt == Format.BINARY_SI and 0 < amount < 1:
        fmt = Format.DECIMAL_SI
    return Quantity(amount if parts.positive else -amount, fmt)


def _fast_path(text: str, parts: _Parts, base: int, exponent: int, fmt: Format) -> Quantity | None:
    """The int64 path of ParseQuantity, which alone keeps the client's text when it is canonical."""
    mantissa, scale = 1, exponent
    if fmt == Format.BINARY_SI:
        scale = 0
        if exponent < 0 or parts.denom:
            return None
        mantissa = 1 << exponent
        precision = 15 - len(parts.num) - int(exponent * 3 / 10) - 1
    else:
        precision = 18 - len(parts.num) - len(parts.denom)
    if precision < 0:
        return None
    scale -= len(parts.denom)
    if scale < NANO:
        return None
    shifted = parts.num + parts.denom
    number = int(shifted)
    result = number * mantissa
    if result > MAX_INT64:
        return None
    if not parts.positive:
        result = -result
    value = Fraction(result) * Fraction(10) ** scale
    if fmt == Format.BINARY_SI:
        kept = exponent % 10 == 0 and number & 0x07 != 0
    else:
        kept = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
    return Quantity(value, fmt, text if kept else None, scale)


def _canonical(value: Fraction, fmt: Format) -> str:
    """CanonicalizeBytes: the largest exact suffix of the format (BinarySI only for exact integers >= 1024)."""
    if value == 0:
        return "0"
    if fmt == Format.BINARY_SI:
        rounded = _round_away(value, 0)
        if -1024 < value < 1024 or rounded != value:
            fmt = Format.DECIMAL_SI
        else:
            number, times = _remove_factors(int(rounded), 1024)
            return f"{number}{_BINARY_BY_EXPONENT.get(times * 10, '')}"
    mantissa, exponent = _decimal_parts(value)
    while exponent % 3:
        mantissa *= 10
        exponent -= 1
    if fmt == Format.DECIMAL_SI:
        return f"{mantissa}{_DECIMAL_BY_EXPONENT.get(exponent, '')}"
    return f"{mantissa}e{exponent}" if exponent else str(mantissa)


def _decimal_parts(value: Fraction) -> tuple[int, int]:
    """(mantissa, exponent) with value == mantissa * 10**exponent and no factor 10 left in the mantissa."""
    exponent = 0
    while value.denominator != 1:
        value *= 10
        exponent -= 1
    mantissa, times = _remove_factors(value.numerator, 10)
    return mantissa, exponent + times


def _remove_factors(value: int, base: int) -> tuple[int, int]:
    negative, value, times = value < 0, abs(value), 0
    while value >= base and value % base == 0:
        value //= base
        times += 1
    return (-value if negative else value), times


def canonical(raw: str | int | float, *, resource_list: bool = False) -> str:
    """What the API server stores for a quantity sent as `raw` (a JSON string or number)."""
    text = raw if isinstance(raw, str) else _json_number(raw)
    quantity = parse(text.strip())
    return str(quantity.round_up(MILLI) if resource_list else quantity)


def _json_number(number: int | float) -> str:
    if isinstance(number, bool):
        raise QuantityError(FORMAT_WRONG)
    return repr(number) if isinstance(number, float) else str(number)
