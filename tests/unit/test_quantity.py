"""Kubernetes quantities (engine.quantity): parsing, the canonical form the API server writes back, milliunit
rounding of ResourceLists, comparison and arithmetic, and the parser's error messages."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pytest

from engine import quantity
from engine.quantity import Format, QuantityError


@pytest.mark.parametrize(("text", "value", "fmt"), [
    ("1", Fraction(1), Format.DECIMAL_SI), ("1Ki", Fraction(1024), Format.BINARY_SI),
    ("500m", Fraction(1, 2), Format.DECIMAL_SI), ("1e3", Fraction(1000), Format.DECIMAL_EXPONENT),
    ("-1.5", Fraction(-3, 2), Format.DECIMAL_SI), ("0.5Ki", Fraction(512), Format.BINARY_SI),
    ("0.0001n", Fraction(1, 10**9), Format.DECIMAL_SI), ("-", Fraction(0), Format.DECIMAL_SI),
])
def test_parse_gives_the_exact_value_and_format(text: str, value: Fraction, fmt: Format) -> None:
    parsed = quantity.parse(text)
    assert (parsed.value, parsed.format) == (value, fmt)


@pytest.mark.parametrize(("text", "canonical"), [
    ("1000m", "1"), ("1024Mi", "1Gi"), ("0.5", "500m"), ("1e3", "1e3"), ("1000e3", "1e6"), ("+1", "+1"),
    ("01", "01"), ("1.5m", "1500u"), ("1.5Ki", "1536"), ("1023", "1023"), ("0.5Mi", "512Ki"), ("100E", "100E"),
])
def test_canonical_form_keeps_canonical_text_and_rewrites_the_rest(text: str, canonical: str) -> None:
    assert quantity.canonical(text) == canonical


def test_resource_lists_round_up_to_the_milliunit_away_from_zero() -> None:
    assert [quantity.canonical(t, resource_list=True) for t in ("1.1m", "-1.1m", "1n", "2m")] == \
        ["2m", "-2m", "1m", "2m"]


def test_json_numbers_are_read_as_their_text() -> None:
    assert (quantity.canonical(0.5), quantity.canonical(3), quantity.canonical(" 2 ")) == ("500m", "3", "2")


def test_compare_add_and_sub_work_on_values() -> None:
    one, milli = quantity.parse("1"), quantity.parse("1000m")
    assert one.compare(milli) == 0 and quantity.parse("1Gi").compare(quantity.parse("1G")) == 1
    assert str(one.add(quantity.parse("500m"))) == "1500m"
    assert str(quantity.parse("1Gi").sub(quantity.parse("512Mi"))) == "512Mi"
    assert quantity.parse("-3").sign == -1


@pytest.mark.parametrize(("text", "error"), [
    ("", quantity.FORMAT_WRONG), ("abc", quantity.FORMAT_WRONG), ("1.2.3", quantity.FORMAT_WRONG),
    ("1mi", quantity.SUFFIX_WRONG), ("1e", quantity.SUFFIX_WRONG), ("1ee3", quantity.SUFFIX_WRONG),
])
def test_malformed_quantities_are_refused_with_the_servers_words(text: str, error: str) -> None:
    with pytest.raises(QuantityError, match=f"^{re.escape(error)}$"):
        quantity.parse(text)


GOLDEN = Path(__file__).parent / "fixtures" / "quantity" / "canonical.tsv"


def test_every_text_of_the_go_golden_table_parses_and_prints_as_apimachinery_does() -> None:
    """canonical.tsv was written by k8s.io/apimachinery v0.37.2 itself (fixtures/quantity/main.go): for each text,
    Quantity.String() and String() after RoundUp(-3), or the parse error."""
    mismatches = []
    for line in GOLDEN.read_text(encoding="utf-8").splitlines():
        text, *expected = line.split("\t")
        try:
            parsed = quantity.parse(text)
            got = [str(parsed), str(parsed.round_up())]
        except QuantityError as e:
            got = [f"ERR {e}"]
        if got != expected:
            mismatches.append((text, expected, got))
    assert mismatches == []
    assert len(GOLDEN.read_text(encoding="utf-8").splitlines()) > 1000
