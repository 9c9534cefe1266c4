"""GET of one object and LIST of a collection (with selectors, limit/continue and Table output)."""

from __future__ import annotations

import base64
import binascii
import json
from typing import TYPE_CHECKING, Any

from engine.apiserver import eventsv1, scale, tables
from engine.apiserver.objects import JsonDict, name_of, namespace_of
from engine.apiserver.requests import ApiRequest, ApiResponse
from engine.apiserver.resources import ResourceType
from engine.apiserver.routing import Target
from engine.apiserver.selectors import matcher, parse_both
from engine.apiserver.status import bad_request, expired, not_found

if TYPE_CHECKING:
    from engine.apiserver.api import Api


def served_form(rt: ResourceType, obj: JsonDict) -> JsonDict:
    """The stored object as the requested version presents it (CRD conversion None rewrites apiVersion; a core
    Event is converted to events.k8s.io/v1)."""
    if obj.get("apiVersion") == rt.api_version:
        return obj
    if eventsv1.is_events_v1(rt):
        return eventsv1.from_core(obj)
    return {**obj, "apiVersion": rt.api_version}


def list_item(rt: ResourceType, obj: JsonDict) -> JsonDict:
    """Built-in list items carry no kind/apiVersion; custom resource items do."""
    if rt.is_custom:
        return served_form(rt, obj)
    return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}


def get(api: Api, target: Target, req: ApiRequest) -> ApiResponse:
    rt = target.rt
    obj = api.store.get(rt.key, target.namespace, target.name)
    if obj is None:
        raise not_found(rt, target.name)
    if target.subresource == "scale":
        return ApiResponse(200, scale.from_parent(rt, obj))
    obj = served_form(rt, obj)
    if req.wants_table():
        return ApiResponse(200, tables.table(api, rt, [obj], req, api.store.revision))
    return ApiResponse(200, obj)


def list_(api: Api, target: Target, req: ApiRequest) -> ApiResponse:
    rt = target.rt
    labels, fields = parse_both(req.query, rt)
    accepts = matcher(labels, fields)
    limit = parse_limit(req.query.get("limit"))
    start_rv, start_key = parse_continue(req.query.get("continue"), api)
    with api.store.lock:
        revision = api.store.revision
        found = candidates(api, rt, target.namespace, fields.single_name())
    items = [o for o in found if accepts(o)]
    if start_key is not None:
        items = [o for o in items if continue_key(o) > start_key]
    metadata: dict[str, Any] = {"resourceVersion": str(start_rv or revision)}
    if limit and len(items) > limit:
        remaining = len(items) - limit
        items = items[:limit]
        metadata["continue"] = encode_continue(start_rv or revision, continue_key(items[-1]))
        metadata["remainingItemCount"] = remaining
    if req.wants_table():
        table = tables.table(api, rt, [served_form(rt, o) for o in items], req, revision)
        table["metadata"] = metadata
        return ApiResponse(200, table)
    body = {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": metadata,
            "items": [list_item(rt, o) for o in items]}
    return ApiResponse(200, body)


def candidates(api: Api, rt: ResourceType, namespace: str, name: str | None) -> list[JsonDict]:
    """Objects of the collection, looked up directly when a field selector pins the name."""
    if name is None:
        return api.store.items(rt.key, namespace or None)
    if namespace or not rt.namespaced:
        one = api.store.get(rt.key, namespace, name)
        return [one] if one is not None else []
    return [o for o in api.store.items(rt.key) if name_of(o) == name]


def parse_limit(text: str | None) -> int:
    if not text:
        return 0
    try:
        return max(0, int(text))
    except ValueError as e:
        raise bad_request(f"invalid limit: {text!r}") from e


def continue_key(obj: JsonDict) -> str:
    return f"{namespace_of(obj)}/{name_of(obj)}"


def encode_continue(rv: int, key: str) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": key + "\x00"}, separators=(",", ":"))
    return base64.b64encode(raw.encode()).decode()


def parse_continue(token: str | None, api: Api) -> tuple[int, str | None]:
    if not token:
        return 0, None
    try:
        data = json.loads(base64.b64decode(token, validate=True))
        rv, key = int(data["rv"]), str(data["start"]).rstrip("\x00")
    except (binascii.Error, ValueError, KeyError, TypeError) as e:
        raise bad_request(f"continue key is not valid: {e}") from e
    if rv < api.store.history_floor:
        raise expired("The provided continue parameter is too old to display a consistent list result. "
                      "You can start a new list without the continue parameter.")
    return rv, key
