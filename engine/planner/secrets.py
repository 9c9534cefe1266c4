"""Keeping secret parameter values out of status and Events: salted digests, omission, and scrubbing of messages."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from engine.model import Package
from engine.params import REDACTED

__all__ = ["fingerprint", "public", "scrub", "secret_texts"]

MIN_SCRUB = 4  # shorter secret texts would mangle every message; they protect nothing anyway


def secret_names(pkg: Package) -> frozenset[str]:
    return frozenset(p.name for p in pkg.parameters if p.secret)


def digest(value: Any, salt: str) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(f"{salt}\0{text}".encode()).hexdigest()


def fingerprint(pkg: Package, values: Mapping[str, Any], salt: str) -> dict[str, Any]:
    """`values` with each secret value replaced by `sha256:<digest>` (salted with the Instance uid)."""
    secret = secret_names(pkg)
    return {k: digest(v, salt) if k in secret and v is not None else v for k, v in sorted(values.items())}


def public(pkg: Package, values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` without the secret ones (for the history)."""
    secret = secret_names(pkg)
    return {k: v for k, v in sorted(values.items()) if k not in secret}


def secret_texts(pkg: Package, values: Mapping[str, Any]) -> tuple[str, ...]:
    """The texts of secret values long enough to look for in messages, longest first."""
    secret = secret_names(pkg)
    texts = {text_of(v) for k, v in values.items() if k in secret and v is not None}
    return tuple(sorted((t for t in texts if len(t) >= MIN_SCRUB), key=lambda t: (-len(t), t)))


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def scrub(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret text in it replaced by `*****`."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text
