"""Counts API requests by verb at the HTTP layer, so no request escapes the figures (/metrics, benchmarks)."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any
from urllib.parse import parse_qs, urlsplit

from engine import __version__
from engine.kube.sdk import ApiClient, Configuration

__all__ = ["DISCOVERY", "VERBS", "CountingApiClient", "verb_of"]

DISCOVERY = "discovery"  # /api, /apis, /apis/<group>/<version>, /version, /openapi, ...
VERBS = ("get", "list", "watch", "create", "update", "patch", "apply", "delete", "deletecollection", DISCOVERY)
_NAMESPACE_SUBRESOURCES = ("status", "finalize")


def resource_segments(path: str) -> list[str] | None:
    """The path segments after /api/<v> or /apis/<g>/<v>; None for a path that names no resource."""
    segments = [s for s in path.split("/") if s]
    if segments[:1] == ["api"]:
        rest = segments[2:]
    elif segments[:1] == ["apis"]:
        rest = segments[3:]
    else:
        return None
    if not rest:
        return None
    is_namespace_object = len(rest) == 3 and rest[2] in _NAMESPACE_SUBRESOURCES
    if rest[0] == "namespaces" and len(rest) >= 3 and not is_namespace_object:
        rest = rest[2:]
    return rest


def verb_of(method: str, path: str, query: str = "", content_type: str | None = None) -> str:
    """The Kubernetes verb of one request: get, list, watch, create, update, patch, apply, delete, ..."""
    rest = resource_segments(path)
    if rest is None:
        return DISCOVERY
    collection = len(rest) == 1
    method = method.upper()
    if method == "GET":
        if parse_qs(query).get("watch", [""])[0] in ("true", "1"):
            return "watch"
        return "list" if collection else "get"
    if method == "PATCH":
        return "apply" if content_type and "apply-patch" in content_type else "patch"
    if method == "DELETE":
        return "deletecollection" if collection else "delete"
    return {"POST": "create", "PUT": "update"}.get(method, method.lower())


class CountingApiClient(ApiClient):
    """An ApiClient that counts every request it sends in `requests`, by verb."""

    def __init__(self, configuration: Configuration, requests: Counter[str] | None = None) -> None:
        super().__init__(configuration)
        self.user_agent = f"kplan/{__version__}"
        # Every verb present from the start: readers may copy the counter while requests are counted.
        self.requests: Counter[str] = requests if requests is not None else Counter(dict.fromkeys(VERBS, 0))
        self._prefix = urlsplit(configuration.host).path.rstrip("/")
        self._lock = threading.Lock()

    def call_api(
        self,
        method: str,
        url: str,
        header_params: dict[str, str] | None = None,
        body: Any = None,
        post_params: Any = None,
        _request_timeout: Any = None,
    ) -> Any:
        self.count(method, url, (header_params or {}).get("Content-Type"))
        return super().call_api(method, url, header_params, body, post_params, _request_timeout)

    def count(self, method: str, url: str, content_type: str | None) -> None:
        parts = urlsplit(url)
        path = parts.path[len(self._prefix) :] if parts.path.startswith(self._prefix) else parts.path
        verb = verb_of(method, path, parts.query, content_type)
        with self._lock:
            self.requests[verb] += 1
