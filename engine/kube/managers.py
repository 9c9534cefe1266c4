"""Handing the fields some field managers own on an object to another manager, by rewriting its managedFields.

This is how client-go's csaupgrade moves ownership: one JSON patch replaces `metadata.managedFields` with the
rewritten entries, and sets the resourceVersion read, so a change in between fails with Conflict instead of
being overwritten. The server-side apply that follows then owns exactly what the new manager applies.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.kube.client import Kube

__all__ = ["JSON_PATCH", "hand_over", "handed_over"]

JSON_PATCH = "application/json-patch+json"
Json = dict[str, Any]


def handed_over(entries: Sequence[Mapping[str, Any]], managers: Collection[str], to: str) -> list[Json] | None:
    """`entries` with the Apply entries of `managers` merged into `to`'s Apply entry; None when none is there."""
    moving = [e for e in entries if e.get("operation") == "Apply" and e.get("manager") in managers
              and not e.get("subresource") and e.get("manager") != to]
    if not moving:
        return None
    target = next((e for e in entries if e.get("operation") == "Apply" and e.get("manager") == to
                   and not e.get("subresource")), None)
    fields: Json = dict((target or {}).get("fieldsV1") or {})
    for entry in moving:
        fields = union(fields, entry.get("fieldsV1") or {})
    merged = {**(target or moving[0]), "manager": to, "fieldsType": "FieldsV1", "fieldsV1": fields}
    kept = [dict(e) for e in entries if not any(e is m for m in moving) and e is not target]
    return [*kept, merged]


def union(a: Mapping[str, Any], b: Mapping[str, Any]) -> Json:
    """The union of two FieldsV1 sets (nested maps of path elements)."""
    out = dict(a)
    for key, value in b.items():
        mine = out.get(key)
        out[key] = union(mine, value) if isinstance(mine, Mapping) and isinstance(value, Mapping) else value
    return out


def hand_over(kube: Kube, api_version: str, kind: str, name: str, namespace: str | None,
              managers: Collection[str], to: str) -> Json | None:
    """Make `to` own what `managers` own on the object (a no-op when they own nothing); the object as written,
    None when it does not exist. Raises Conflict when the object changed between the read and the write."""
    live = kube.get(api_version, kind, name, namespace)
    if live is None:
        return None
    meta = live.get("metadata") or {}
    entries = handed_over(meta.get("managedFields") or [], managers, to)
    if entries is None:
        return live
    patch = [{"op": "replace", "path": "/metadata/managedFields", "value": entries},
             {"op": "replace", "path": "/metadata/resourceVersion", "value": meta.get("resourceVersion")}]
    return kube.patch(api_version, kind, name, namespace, patch, content_type=JSON_PATCH)
