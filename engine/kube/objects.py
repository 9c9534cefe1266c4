"""Identity of objects as plain dicts: apiVersion, kind, namespace, name, and how to name them to a person."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.errors import PermanentError
from engine.jsoncopy import copy_json as copied  # the watch caches hand out copies of what they hold

__all__ = ["copied", "describe", "identity_of", "name_of", "namespace_of", "resource_version_of", "with_type"]


def name_of(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def namespace_of(obj: Mapping[str, Any]) -> str | None:
    return (obj.get("metadata") or {}).get("namespace") or None


def resource_version_of(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def identity_of(obj: Mapping[str, Any]) -> tuple[str, str, str | None, str]:
    """(apiVersion, kind, namespace, name); PermanentError when apiVersion or kind is missing."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not api_version or not kind:
        raise PermanentError(f"object {name_of(obj) or '(unnamed)'} has no apiVersion or kind")
    return str(api_version), str(kind), namespace_of(obj), name_of(obj)


def describe(kind: str, namespace: str | None, name: str) -> str:
    """'Deployment shop/web' or 'Namespace shop'."""
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def with_type(obj: dict[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    """`obj` with apiVersion and kind set; list items of built-in kinds arrive without them."""
    obj.setdefault("apiVersion", api_version)
    obj.setdefault("kind", kind)
    return obj
