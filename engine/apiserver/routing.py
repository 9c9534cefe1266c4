"""URL paths of resources: `/api/v1/namespaces/ns/pods/name/status` → a Target, or 404."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from engine.apiserver.resources import Registry, ResourceType
from engine.apiserver.status import not_served, page_not_found

NAMESPACE_SUBRESOURCES = ("status", "finalize")


@dataclass(frozen=True)
class Target:
    """What a resource request addresses: a collection (name "") or one object, maybe a subresource."""

    rt: ResourceType
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    legacy_watch: bool = False


def is_resource_path(parts: list[str]) -> bool:
    return (len(parts) >= 3 and parts[0] == "api") or (len(parts) >= 4 and parts[0] == "apis")


def parse(path: str, registry: Registry) -> Target:
    """Resolve a resource path; 404 (not served) for anything that does not name a served resource."""
    parts = [unquote(p) for p in path.split("/") if p]
    if not is_resource_path(parts):
        raise not_served()
    group, version, rest = ("", parts[1], parts[2:]) if parts[0] == "api" else (parts[1], parts[2], parts[3:])
    if group and not registry.serves(group, version):
        raise page_not_found()  # no API group serves this path at all (the legacy /api answers for itself)
    legacy_watch = bool(rest) and rest[0] == "watch"
    if legacy_watch:
        rest = rest[1:]
    namespace = ""
    if len(rest) >= 3 and rest[0] == "namespaces" and not (len(rest) == 3 and rest[2] in NAMESPACE_SUBRESOURCES):
        namespace, rest = rest[1], rest[2:]
    if not rest or len(rest) > 3:
        raise not_served()
    rt = registry.lookup(group, version, rest[0])
    if rt is None:
        raise not_served()
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    if namespace and not rt.namespaced:
        raise not_served()
    if rt.namespaced and name and not namespace:
        raise not_served()
    allowed = rt.subresources + (("finalize",) if rt.key == "/namespaces" else ()) + \
        (("log",) if rt.key == "/pods" else ())
    if sub and sub not in allowed:
        raise not_served()
    if legacy_watch and sub:
        raise not_served()
    return Target(rt, namespace, name, sub, legacy_watch)
