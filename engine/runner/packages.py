"""Packages rebuilt from OperatorVersions, parsed once per OperatorVersion uid and resourceVersion."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from engine.model import Package
from engine.package.loader import from_files

__all__ = ["PackageCache"]

Key = tuple[str, str]  # uid, resourceVersion


class PackageCache:
    """`package(operator_version)` parses `spec.files` the first time a version of the object is seen.

    PackageInvalid escapes (and is not cached: the same object fails the same way, cheaply enough).
    """

    def __init__(self, limit: int = 256) -> None:
        self._packages: dict[Key, Package] = {}
        self._limit = limit
        self._lock = threading.Lock()

    def package(self, operator_version: Mapping[str, Any]) -> Package:
        meta = operator_version.get("metadata") or {}
        key = (str(meta.get("uid") or ""), str(meta.get("resourceVersion") or ""))
        with self._lock:
            found = self._packages.get(key)
        if found is not None:
            return found
        files = (operator_version.get("spec") or {}).get("files") or {}
        source = f"OperatorVersion {meta.get('namespace')}/{meta.get('name')}"
        pkg = from_files({str(k): str(v) for k, v in files.items()}, source)
        with self._lock:
            if len(self._packages) >= self._limit:
                self._packages.pop(next(iter(self._packages)))
            self._packages[key] = pkg
        return pkg
