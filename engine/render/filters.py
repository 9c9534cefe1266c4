"""The filters kplan adds to Jinja2's own: serializing, encoding, hashing, quoting, checks."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import shlex
from collections.abc import Callable, Mapping
from typing import Any

import semver
import yaml
from jinja2.runtime import Undefined

from engine.render.values import Values, plain

__all__ = ["FILTERS", "RequiredValueMissing", "semver_compare"]


class RequiredValueMissing(Exception):
    """`required(msg)` met an undefined, None or empty value; the message is the author's."""


def toyaml(value: Any) -> str:
    """Block-style YAML with sorted keys and no trailing newline (indent it with `indent`)."""
    text = yaml.safe_dump(plain(value), default_flow_style=False, sort_keys=True, allow_unicode=True)
    text = text.removesuffix("...\n")
    return text.rstrip("\n")


def tojson(value: Any) -> str:
    """Plain JSON with sorted keys (no HTML escaping: the output is YAML, not HTML); a parameter's once per render."""
    if type(value) is Values:
        return value.derived(_json_of)
    return _SORTED_JSON(plain(value))


def _json_of(value: Any) -> str:
    return _SORTED_JSON(plain(value))


# What json.dumps(..., ensure_ascii=False) does, without building an encoder on every call.
_SORTED_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode
_JSON_STRING: Callable[[str], str] = json.encoder.encode_basestring


def b64encode(value: Any) -> str:
    return base64.b64encode(_as_bytes(value)).decode("ascii")


def b64decode(value: Any) -> str:
    try:
        raw = base64.b64decode(_as_bytes(value), validate=True)
    except binascii.Error as exc:
        raise ValueError(f"b64decode: not valid base64: {exc}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("b64decode: the decoded bytes are not UTF-8 text") from None


def sha256(value: Any) -> str:
    return hashlib.sha256(_as_bytes(value)).hexdigest()


def quote(value: Any) -> str:
    """A double-quoted scalar, valid in YAML flow and block context whatever the value holds."""
    return _JSON_STRING(value if type(value) is str else _as_text(value))


def shquote(value: Any) -> str:
    """A single-quoted word for a POSIX shell command line."""
    return shlex.quote(_as_text(value))


def required(value: Any, message: str = "a required value is missing") -> Any:
    """The value itself, or fail the render with `message` when it is undefined, None or empty."""
    if isinstance(value, Undefined) or value is None:
        raise RequiredValueMissing(message)
    if isinstance(value, str | bytes | list | tuple | Mapping) and len(value) == 0:
        raise RequiredValueMissing(message)
    return value


_CONSTRAINT = re.compile(r"^\s*(>=|<=|==|!=|>|<|=)?\s*v?([0-9][0-9A-Za-z.+-]*)\s*$")


def semver_compare(version: Any, constraint: str) -> bool:
    """Whether `version` satisfies every comma-separated `constraint` (`>=7.0.0, <8`).

    Operators: `<`, `<=`, `>`, `>=`, `==` (or `=` or none), `!=`; missing minor and patch
    numbers count as 0; a leading `v` is ignored.
    """
    parsed = _parse_version(_as_text(version))
    parts = [part for part in str(constraint).split(",") if part.strip()]
    if not parts:
        raise ValueError("semver_compare: the constraint is empty")
    return all(_satisfies(parsed, part) for part in parts)


def _satisfies(version: semver.Version, constraint: str) -> bool:
    match = _CONSTRAINT.match(constraint)
    if match is None:
        raise ValueError(f"semver_compare: {constraint.strip()!r} is not a version constraint")
    operator, bound = match.group(1) or "==", _parse_version(match.group(2))
    order = version.compare(bound)
    return _ORDERS[operator](order)


_ORDERS: Mapping[str, Callable[[int], bool]] = {
    "<": lambda order: order < 0,
    "<=": lambda order: order <= 0,
    ">": lambda order: order > 0,
    ">=": lambda order: order >= 0,
    "==": lambda order: order == 0,
    "=": lambda order: order == 0,
    "!=": lambda order: order != 0,
}


def _parse_version(text: str) -> semver.Version:
    try:
        return semver.Version.parse(text.strip().removeprefix("v"), optional_minor_and_patch=True)
    except (ValueError, TypeError):
        raise ValueError(f"semver_compare: {text!r} is not a semantic version") from None


def _as_text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def _as_bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


FILTERS: Mapping[str, Callable[..., Any]] = {
    "toyaml": toyaml,
    "tojson": tojson,
    "b64encode": b64encode,
    "b64decode": b64decode,
    "sha256": sha256,
    "quote": quote,
    "shquote": shquote,
    "required": required,
    "semver_compare": semver_compare,
}
