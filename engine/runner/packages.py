"""Packages rebuilt from OperatorVersions, parsed once per OperatorVersion uid and resourceVersion (concurrent
passes of one new version wait for one parse instead of each making one)."""

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
        self._parsing: dict[Key, threading.Lock] = {}
        self._limit = limit
        self._lock = threading.Lock()

    def package(self, operator_version: Mapping[str, Any]) -> Package:
        meta = operator_version.get("metadata") or {}
        key = (str(meta.get("uid") or ""), str(meta.get("resourceVersion") or ""))
        with self._lock:
            found = self._packages.get(key)
            parsing = self._parsing.setdefault(key, threading.Lock()) if found is None else None
        if found is not None:
            return found
        assert parsing is not None
        try:
            with parsing:  # one parse per version: a second caller waits for it, then finds it kept
                with self._lock:
                    found = self._packages.get(key)
                return found if found is not None else self._parsed(operator_version, key)
        finally:
            with self._lock:
                self._parsing.pop(key, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._packages)

    def _parsed(self, operator_version: Mapping[str, Any], key: Key) -> Package:
        meta = operator_version.get("metadata") or {}
        files = (operator_version.get("spec") or {}).get("files") or {}
        source = f"OperatorVersion {meta.get('namespace')}/{meta.get('name')}"
        pkg = from_files({str(k): str(v) for k, v in files.items()}, source)
        with self._lock:
            if len(self._packages) >= self._limit:
                self._packages.pop(next(iter(self._packages)))
            self._packages[key] = pkg
        return pkg
