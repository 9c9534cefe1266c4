"""update_status: write an object's whole status (status subresource when served), retrying on conflicts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from engine.kube.errors import Conflict, NotFound
from engine.kube.objects import describe, identity_of

if TYPE_CHECKING:
    from engine.kube.client import Kube

__all__ = ["ATTEMPTS", "update_status"]

ATTEMPTS = 5


def update_status(kube: Kube, obj: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, Any]:
    """PUT `obj` with `status` under its resourceVersion; on Conflict re-read the object and try again.

    The status replaces the old one whole (a merge patch could not remove keys the new status lacks).
    """
    api_version, kind, namespace, name = identity_of(obj)
    subresource = "status" if kube.resource(api_version, kind).has_status else None
    current: Mapping[str, Any] = obj
    for _ in range(ATTEMPTS):
        try:
            return kube.replace({**current, "status": dict(status)}, subresource=subresource)
        except Conflict:
            fresh = kube.get(api_version, kind, name, namespace)
            if fresh is None:
                raise NotFound(f"cannot update the status of {describe(kind, namespace, name)}: it is gone") from None
            current = fresh
    raise Conflict(f"cannot update the status of {describe(kind, namespace, name)}: it kept changing")
