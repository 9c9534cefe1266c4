"""Which resources the server serves: kind → plural, scope and status subresource, cached per group-version."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.errors import PermanentError

__all__ = ["Discovery", "Resource", "group_version_path", "split_api_version"]

# GET a discovery path; the decoded body, or None when the server does not serve it (404).
Fetch = Callable[[str], Mapping[str, Any] | None]


@dataclass(frozen=True)
class Resource:
    """One served kind in one group-version."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool
    has_status: bool

    @property
    def group(self) -> str:
        return split_api_version(self.api_version)[0]

    @property
    def version(self) -> str:
        return split_api_version(self.api_version)[1]

    def path(self, namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
        """The URL path of the collection (name None) or of one object, in `namespace` when namespaced."""
        parts = [group_version_path(self.api_version)]
        if self.namespaced and namespace:
            parts += ["namespaces", namespace]
        parts.append(self.plural)
        if name is not None:
            parts.append(name)
            if subresource:
                parts.append(subresource)
        return "/".join(parts)


def split_api_version(api_version: str) -> tuple[str, str]:
    """("apps", "v1") for "apps/v1", ("", "v1") for the core "v1"."""
    group, _, version = api_version.rpartition("/")
    return group, version


def group_version_path(api_version: str) -> str:
    group, version = split_api_version(api_version)
    return f"/apis/{group}/{version}" if group else f"/api/{version}"


def resources_in(api_version: str, body: Mapping[str, Any] | None) -> dict[str, Resource]:
    """The kinds of an APIResourceList, by kind."""
    entries = list((body or {}).get("resources") or [])
    names = {str(e.get("name")) for e in entries}
    found: dict[str, Resource] = {}
    for entry in entries:
        plural = str(entry.get("name") or "")
        if not plural or "/" in plural:
            continue
        found[str(entry["kind"])] = Resource(
            api_version=api_version,
            kind=str(entry["kind"]),
            plural=plural,
            namespaced=bool(entry.get("namespaced")),
            has_status=f"{plural}/status" in names,
        )
    return found


class Discovery:
    """Resource lookups from a cache filled on demand; a miss refreshes its group-version once."""

    def __init__(self, fetch: Fetch) -> None:
        self._fetch = fetch
        self._served: dict[str, dict[str, Resource]] = {}
        self._fetching: dict[str, threading.Lock] = {}  # api_version -> held while its list is asked for
        self._lock = threading.Lock()

    def resource(self, api_version: str, kind: str) -> Resource:
        """The served resource of `kind` in `api_version`; PermanentError when the server does not serve it."""
        found = self._cached(api_version, kind)
        if found is None:
            # Not cached, or cached before a CRD for it was installed: ask the server once more. Lookups of one
            # group-version that miss together (caches started at once) wait for one answer.
            with self._lock:
                fetching = self._fetching.setdefault(api_version, threading.Lock())
            with fetching:
                found = self._cached(api_version, kind) or self._refresh(api_version).get(kind)
        if found is None:
            raise PermanentError(f"the server does not serve kind {kind} in {api_version}")
        return found

    def invalidate(self) -> None:
        """Forget everything; the next lookups ask the server again."""
        with self._lock:
            self._served.clear()

    def _cached(self, api_version: str, kind: str) -> Resource | None:
        """Without the lock (every cache read of a pass asks): each group-version's map is replaced whole, never
        changed, and one dict read is atomic."""
        return (self._served.get(api_version) or {}).get(kind)

    def _refresh(self, api_version: str) -> dict[str, Resource]:
        served = resources_in(api_version, self._fetch(group_version_path(api_version)))
        with self._lock:
            self._served[api_version] = served
        return served
