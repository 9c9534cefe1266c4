"""wait_for: until a predicate holds for one object, by listing it (or starting from the object as last written) and
watching from that version."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from engine.errors import Timeout
from engine.kube.errors import Expired
from engine.kube.objects import describe, name_of, resource_version_of

if TYPE_CHECKING:
    from engine.kube.client import Kube

__all__ = ["wait_for"]

Predicate = Callable[[dict[str, Any] | None], bool]


def wait_for(
    kube: Kube,
    api_version: str,
    kind: str,
    name: str,
    namespace: str | None,
    predicate: Predicate,
    timeout: float,
    *,
    condition: str = "the expected state",
    seen: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The object (None when absent) as soon as `predicate` holds for it; Timeout after `timeout` seconds.

    `seen`: the object as the caller has just written (or read) it. The predicate is tried on it, and the watch starts
    from its resourceVersion without a list first: one round trip less (a version the server no longer has is
    listed again as usual)."""
    resource = kube.resource(api_version, kind)
    namespace = (namespace or kube.namespace) if resource.namespaced else None
    deadline = kube.clock.monotonic() + timeout
    selector = f"metadata.name={name}"
    current = dict(seen) if seen is not None else None
    version = resource_version_of(current) if current is not None else ""  # none: list first
    while True:
        if not version:
            items, version = kube.list_with_version(api_version, kind, namespace, field_selector=selector)
            current = next((item for item in items if name_of(item) == name), None)
        if predicate(current):
            return current
        remaining = deadline - kube.clock.monotonic()
        if remaining <= 0:
            break
        try:
            with kube.watch(api_version, kind, namespace=namespace, field_selector=selector,
                            resource_version=version or None, timeout=remaining) as changes:
                for change, obj in changes:
                    if name_of(obj) != name:
                        continue
                    current = None if change == "DELETED" else obj
                    if predicate(current):
                        return current
            break
        except Expired:
            version = ""  # the version we watched from is gone: list again
    state = "does not exist" if current is None else f"is at resourceVersion {resource_version_of(current)}"
    raise Timeout(f"{describe(kind, namespace, name)} did not reach {condition} within {timeout:g}s (it {state})")
