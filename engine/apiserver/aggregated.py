"""Aggregated discovery (apidiscovery.k8s.io/v2): `/api` and `/apis` as one APIGroupDiscoveryList, when asked for.

A client asks with `Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList` (also in YAML or
protobuf), usually followed by `application/json` as its fallback. As the real server does, any acceptable
aggregated entry wins over the plain types; v2beta1 is no longer served (the fallback answers); a list with
nothing the server can write is 406. The answer carries an ETag, and `If-None-Match` with it is a 304.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import yaml

from engine.apiserver import protobuf
from engine.apiserver.requests import ApiResponse
from engine.apiserver.resources import SUBRESOURCE_VERBS, Registry, ResourceType
from engine.apiserver.status import ApiError

AS = (("g", "apidiscovery.k8s.io"), ("v", "v2"), ("as", "APIGroupDiscoveryList"))
SUFFIX = ";g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
JSON, YAML = "application/json", "application/yaml"
PLAIN_RANGES = (JSON, YAML, protobuf.MEDIA_TYPE, "application/*", "*/*")
EXTRA_SUBRESOURCES = {"/namespaces": (("finalize", "Namespace", ("update",)),),
                      "/pods": (("log", "Pod", ("get",)),)}


def _entries(accept: str) -> list[tuple[str, dict[str, str]]]:
    """(media type, parameters) of each Accept entry with a non-zero q, in the client's order."""
    found = []
    for part in accept.split(","):
        media, *raw = (p.strip() for p in part.split(";"))
        params = dict(p.split("=", 1) for p in raw if "=" in p)
        if params.pop("q", "1").strip() not in ("0", "0.0", "0.00", "0.000"):
            found.append((media.lower(), params))
    return found


def negotiate(accept: str) -> str | None:
    """The media type of the aggregated answer the client accepts, or None (then the plain document)."""
    for media, params in _entries(accept):
        if media in (JSON, YAML, protobuf.MEDIA_TYPE) and all(params.get(k) == v for k, v in AS):
            return media
    return None


def check_plain(accept: str) -> None:
    """406 when the Accept header names types and none of them is a plain one the server writes."""
    entries = _entries(accept)
    if accept.strip() and not any(media in PLAIN_RANGES and not params.get("as") for media, params in entries):
        raise not_acceptable()


def not_acceptable() -> ApiError:
    return ApiError(406, "NotAcceptable", "only the following media types are accepted: application/json, "
                    "application/yaml, application/vnd.kubernetes.protobuf")


def document(registry: Registry, core: bool) -> dict[str, Any]:
    """The APIGroupDiscoveryList of the core group (`/api`) or of every named group (`/apis`)."""
    items = [_group(registry, group, versions) for group, versions in registry.groups() if bool(group) != core]
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}


def _group(registry: Registry, group: str, versions: list[str]) -> dict[str, Any]:
    meta = {"name": group} if group else {}
    return {"metadata": meta, "versions": [
        {"version": v, "resources": [_resource(rt) for rt in registry.in_group_version(group, v)],
         "freshness": "Current"} for v in versions]}


def _kind(rt: ResourceType, kind: str | None = None) -> dict[str, str]:
    """The responseKind: built-in resources leave group and version empty, custom ones name their own."""
    if rt.is_custom:
        return {"group": rt.group, "version": rt.version, "kind": kind or rt.kind}
    return {"group": "", "version": "", "kind": kind or rt.kind}


def _resource(rt: ResourceType) -> dict[str, Any]:
    entry: dict[str, Any] = {"resource": rt.plural, "responseKind": _kind(rt),
                             "scope": "Namespaced" if rt.namespaced else "Cluster",
                             "singularResource": rt.singular, "verbs": list(rt.verbs)}
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    subresources = [_subresource(rt, name) for name in rt.subresources]
    subresources += [{"subresource": name, "responseKind": _kind(rt, kind), "verbs": list(verbs)}
                     for name, kind, verbs in EXTRA_SUBRESOURCES.get(rt.key, ())]
    if subresources:
        entry["subresources"] = subresources if rt.is_custom else sorted(subresources,
                                                                         key=lambda s: s["subresource"])
    return entry


def _subresource(rt: ResourceType, name: str) -> dict[str, Any]:
    kind = {"group": "autoscaling", "version": "v1", "kind": "Scale"} if name == "scale" else _kind(rt)
    return {"subresource": name, "responseKind": kind, "verbs": list(SUBRESOURCE_VERBS)}


def answer(body: dict[str, Any], media: str, if_none_match: str) -> ApiResponse:
    """The encoded answer with the real server's caching headers (a public, ETag-validated document)."""
    etag = '"' + hashlib.sha512(json.dumps(body, sort_keys=True).encode()).hexdigest().upper() + '"'
    headers = {"Cache-Control": "public", "Vary": "Accept", "ETag": etag}
    if if_none_match.strip() == etag:
        return ApiResponse(304, b"", headers)
    if media == protobuf.MEDIA_TYPE:
        payload = protobuf.encode_envelope(body)
        assert payload is not None, "the apidiscovery.k8s.io/v2 messages are in the descriptors"
    elif media == YAML:
        payload = yaml.safe_dump(body, sort_keys=True).encode()
    else:
        payload = json.dumps(body, separators=(",", ":")).encode() + b"\n"
    return ApiResponse(200, payload, {"Content-Type": media + SUFFIX, **headers})
