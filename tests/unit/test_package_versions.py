"""Semantic versions and ranges (upgradableFrom, kplanVersion), upgrade eligibility, and duration parsing."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from engine.model import Package
from engine.package.durations import parse_duration
from engine.package.versions import is_version, may_upgrade, parse_range, satisfies


@pytest.mark.parametrize(
    ("version", "range_", "expected"),
    [
        ("0.2.0", "0.2.x", True),
        ("0.2.17", "0.2.x", True),
        ("0.3.0", "0.2.x", False),
        ("0.3.0-rc.1", "0.2.x", False),
        ("0.2.5", "0.2", True),
        ("0.2.1", "0.2.1", True),
        ("0.2.2", "0.2.1", False),
        ("0.2.1", "=0.2.1", True),
        ("0.1.0", ">=0.1.0 <0.3.0", True),
        ("0.2.9", ">=0.1.0 <0.3.0", True),
        ("0.3.0", ">=0.1.0 <0.3.0", False),
        ("0.0.9", ">=0.1.0 <0.3.0", False),
        ("0.2.0", ">= 0.1.0, < 0.3", True),
        ("0.1.5", ">=0.1", True),
        ("0.2.0", ">0.1", True),
        ("0.1.9", ">0.1", False),
        ("0.1.9", "<=0.1", True),
        ("0.2.0", "<=0.1", False),
        ("1.2.9", "~1.2.3", True),
        ("1.3.0", "~1.2.3", False),
        ("1.9.0", "^1.2.3", True),
        ("2.0.0", "^1.2.3", False),
        ("0.2.9", "^0.2.3", True),
        ("0.3.0", "^0.2.3", False),
        ("0.0.3", "^0.0.3", True),
        ("0.0.4", "^0.0.3", False),
        ("7.0.0", "*", True),
        ("7.0.0", "x", True),
        ("0.1.0", "0.1.0 || 0.3.x", True),
        ("0.3.2", "0.1.0 || 0.3.x", True),
        ("0.2.0", "0.1.0 || 0.3.x", False),
        ("1.0.0-rc.2", ">=1.0.0-rc.1", True),
    ],
)
def test_satisfies(version: str, range_: str, expected: bool) -> None:
    assert satisfies(version, range_) is expected


@pytest.mark.parametrize(
    ("range_", "reason"),
    [
        ("", "the range is empty"),
        ("abc", "'abc' is not a version or comparator"),
        ("=>0.1", "'=>0.1' is not a version or comparator"),
        ("1.x.3", "'1.x.3' has a number after a wildcard"),
        ("1.2-rc.1", "'1.2-rc.1' has a pre-release on a partial version"),
        ("0.1.0 ||", "a range alternative is empty"),
        ("01.0.0", "'01.0.0' is not a version or comparator"),
    ],
)
def test_parse_range_names_what_is_wrong(range_: str, reason: str) -> None:
    with pytest.raises(ValueError) as e:
        parse_range(range_)
    assert str(e.value) == reason


def test_satisfies_refuses_a_malformed_version() -> None:
    with pytest.raises(ValueError):
        satisfies("0.1", "0.1.x")


@pytest.mark.parametrize(("text", "valid"), [("0.3.0", True), ("1.0.0-rc.1+b5", True), ("0.3", False), (3, False)])
def test_is_version(text: object, valid: bool) -> None:
    assert is_version(text) is valid


def package(version: str, upgradable_from: tuple[str, ...] = ()) -> Package:
    return Package(
        name="demo", operator_version=version, tasks=(), plans=MappingProxyType({}), upgradable_from=upgradable_from
    )


@pytest.mark.parametrize(
    ("pkg", "old", "allowed"),
    [
        (package("0.3.0"), "0.2.0", True),
        (package("0.3.0"), "0.3.0", False),
        (package("0.3.0"), "0.4.0", False),
        (package("0.3.0"), "not-a-version", False),
        (package("0.3.0", ("0.2.x",)), "0.2.4", True),
        (package("0.3.0", ("0.2.x",)), "0.1.0", False),
        (package("0.3.0", ("0.2.x", "0.1.0")), "0.1.0", True),
        (package("0.3.0", ("0.x",)), "0.3.0", False),
    ],
)
def test_may_upgrade(pkg: Package, old: str, allowed: bool) -> None:
    assert may_upgrade(pkg, old) is allowed


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("10m", 600.0),
        ("90s", 90.0),
        ("1h30m", 5400.0),
        ("500ms", 0.5),
        ("1.5s", 1.5),
        ("2h", 7200.0),
        (45, 45.0),
        (2.5, 2.5),
        ("10", None),
        ("10 minutes", None),
        ("-5s", None),
        (-1, None),
        (True, None),
        (None, None),
        ("", None),
        (float("inf"), None),
    ],
)
def test_parse_duration(value: object, seconds: float | None) -> None:
    assert parse_duration(value) == seconds
