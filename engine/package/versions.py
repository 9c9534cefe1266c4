"""Semantic versions and version ranges: `0.2.x`, `>=0.1.0 <0.3.0`, `~1.2`, `^0.2.1`, `a || b`.

Ranges read like npm's: space- or comma-separated comparators must all hold, `||` separates
alternatives. A bare version (`0.2.1`) is exact; a partial or x-range (`0.2`, `0.2.x`, `*`)
covers everything it leaves open. Upper bounds implied by x, `~` and `^` exclude pre-releases
of the bound (`0.2.x` does not cover `0.3.0-rc.1`).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable

import semver

from engine.model import Package

__all__ = ["is_version", "may_upgrade", "parse_range", "satisfies"]

Comparator = tuple[str, semver.Version]
Range = tuple[tuple[Comparator, ...], ...]

_OPS: dict[str, Callable[[semver.Version, semver.Version], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "=": operator.eq,
}
_WILD = r"(?:0|[1-9]\d*|[xX*])"
_COMPARATOR = re.compile(
    rf"^(?P<op><=|>=|<|>|==|=|~|\^)?v?(?P<major>{_WILD})(?:\.(?P<minor>{_WILD}))?(?:\.(?P<patch>{_WILD}))?"
    r"(?:-(?P<pre>[0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$"
)


def is_version(text: object) -> bool:
    """True for a full semantic version such as `0.3.0` or `1.0.0-rc.1`."""
    return isinstance(text, str) and semver.Version.is_valid(text)


def satisfies(version: str, range_: str) -> bool:
    """True when `version` lies in `range_`; ValueError when either is malformed."""
    v = semver.Version.parse(version)
    return any(all(_OPS[op](v, bound) for op, bound in alternative) for alternative in parse_range(range_))


def may_upgrade(pkg: Package, from_version: str) -> bool:
    """True when an Instance at `from_version` may move to `pkg`.

    The package must be newer, and when it declares `upgradableFrom`, the old version must lie
    in one of those ranges. A malformed `from_version` may not upgrade.
    """
    if not is_version(from_version):
        return False
    if semver.Version.parse(from_version) >= semver.Version.parse(pkg.operator_version):
        return False
    return not pkg.upgradable_from or any(satisfies(from_version, r) for r in pkg.upgradable_from)


def parse_range(text: str) -> Range:
    """Parse a range into alternatives of comparators; ValueError names what is wrong."""
    alternatives = [a.strip() for a in text.split("||")]
    if not text.strip():
        raise ValueError("the range is empty")
    return tuple(_parse_alternative(a) for a in alternatives)


def _parse_alternative(text: str) -> tuple[Comparator, ...]:
    parts = [p for p in re.split(r"[\s,]+", text) if p]
    if not parts:
        raise ValueError("a range alternative is empty")
    parts = _join_operators(parts)
    return tuple(c for part in parts for c in _expand(part))


def _join_operators(parts: list[str]) -> list[str]:
    """Accept `>= 1.0` as well as `>=1.0`."""
    joined: list[str] = []
    for part in parts:
        if joined and re.fullmatch(r"<=|>=|<|>|==|=|~|\^", joined[-1]):
            joined[-1] += part
        else:
            joined.append(part)
    return joined


def _expand(part: str) -> list[Comparator]:
    m = _COMPARATOR.match(part)
    if not m:
        raise ValueError(f"{part!r} is not a version or comparator")
    op = m["op"] or "="
    numbers = [_number(m[k]) for k in ("major", "minor", "patch")]
    fixed = _fixed_prefix(numbers, part)
    if m["pre"] and len(fixed) < 3:
        raise ValueError(f"{part!r} has a pre-release on a partial version")
    if not fixed:
        return []
    return _comparators(op, fixed, m["pre"])


def _number(text: str | None) -> int | None:
    return None if text is None or text in "xX*" else int(text)


def _fixed_prefix(numbers: list[int | None], part: str) -> list[int]:
    """The leading fixed numbers; a number after a wildcard is an error (`1.x.3`)."""
    fixed: list[int] = []
    for n in numbers:
        if n is None:
            break
        fixed.append(n)
    if any(n is not None for n in numbers[len(fixed):]):
        raise ValueError(f"{part!r} has a number after a wildcard")
    return fixed


def _comparators(op: str, fixed: list[int], pre: str | None) -> list[Comparator]:
    low = _version(fixed, pre)
    if op in ("~", "^"):
        return [(">=", low), ("<", _bump(fixed, _caret_index(fixed) if op == "^" else _tilde_index(fixed)))]
    if op in ("=", "=="):
        return [("=", low)] if len(fixed) == 3 else [(">=", low), ("<", _bump(fixed, len(fixed) - 1))]
    if len(fixed) == 3:
        return [(op, low)]
    partial_ops = {">=": (">=", low), "<": ("<", low), ">": (">=", _bump(fixed, len(fixed) - 1))}
    partial_ops["<="] = ("<", _bump(fixed, len(fixed) - 1))
    return [partial_ops[op]]


def _tilde_index(fixed: list[int]) -> int:
    return 1 if len(fixed) >= 2 else 0


def _caret_index(fixed: list[int]) -> int:
    """`^` allows changes that do not touch the left-most non-zero number."""
    for i, n in enumerate(fixed):
        if n != 0:
            return i
    return len(fixed) - 1


def _version(fixed: list[int], pre: str | None) -> semver.Version:
    major, minor, patch = [*fixed, 0, 0, 0][:3]
    return semver.Version(major, minor, patch, prerelease=pre)


def _bump(fixed: list[int], index: int) -> semver.Version:
    """The first version past the prefix `fixed[:index + 1]`, before its own pre-releases."""
    bumped = [*fixed[:index], fixed[index] + 1]
    major, minor, patch = [*bumped, 0, 0, 0][:3]
    return semver.Version(major, minor, patch, prerelease="0")
