"""Discovery documents: /version, /api, /apis, /apis/<g>, and the resource lists of each group version."""

from __future__ import annotations

from typing import Any

from engine.apiserver.resources import SUBRESOURCE_VERBS, Registry, ResourceType
from engine.apiserver.status import not_served, page_not_found

KUBERNETES_VERSION = {"major": "1", "minor": "37", "emulationMajor": "1", "emulationMinor": "37",
                      "minCompatibilityMajor": "1", "minCompatibilityMinor": "36", "gitVersion": "v1.37.2",
                      "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
                      "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.25.0", "compiler": "gc",
                      "platform": "linux/amd64"}


def version() -> dict[str, Any]:
    return dict(KUBERNETES_VERSION)


def api_versions(server_address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def _group_entry(group: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": entries, "preferredVersion": dict(entries[0])}


def api_group_list(registry: Registry) -> dict[str, Any]:
    groups = [_group_entry(g, vs) for g, vs in registry.groups() if g]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: Registry, group: str) -> dict[str, Any]:
    for name, versions in registry.groups():
        if name == group and group:
            return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(group, versions)}
    raise page_not_found()


def resource_entry(rt: ResourceType) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": rt.plural, "singularName": rt.singular, "namespaced": rt.namespaced,
                             "kind": rt.kind, "verbs": list(rt.verbs)}
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    return entry


def subresource_entries(rt: ResourceType) -> list[dict[str, Any]]:
    entries = []
    for sub in rt.subresources:
        entry: dict[str, Any] = {"name": f"{rt.plural}/{sub}", "singularName": "", "namespaced": rt.namespaced,
                                 "kind": rt.kind, "verbs": list(SUBRESOURCE_VERBS)}
        if sub == "scale":
            entry.update({"group": "autoscaling", "version": "v1", "kind": "Scale"})
        entries.append(entry)
    if rt.key == "/namespaces":
        entries.insert(0, {"name": "namespaces/finalize", "singularName": "", "namespaced": False,
                           "kind": "Namespace", "verbs": ["update"]})
    return entries


def resource_list(registry: Registry, group: str, version: str) -> dict[str, Any]:
    types = registry.in_group_version(group, version)
    if not types:  # the legacy /api handler answers any version itself; unknown /apis groups fall through
        raise page_not_found() if group else not_served()
    resources = []
    for rt in types:
        resources.append(resource_entry(rt))
        resources.extend(subresource_entries(rt))
    group_version = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}
