"""record_event: core/v1 Events, one per (object, reason, message), a repeat bumping count and lastTimestamp."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from engine.kube.errors import AlreadyExists, Conflict
from engine.kube.objects import identity_of, resource_version_of

if TYPE_CHECKING:
    from engine.kube.client import Kube

__all__ = ["ATTEMPTS", "MAX_MESSAGE", "event_name", "record_event"]

ATTEMPTS = 5
MAX_MESSAGE = 1024  # the API server's limit on an Event's message
_MAX_NAME = 253


def record_event(
    kube: Kube, involved: Mapping[str, Any], reason: str, message: str, *, type: str, component: str
) -> None:
    """Create the Event, or bump the one already recorded for the same object, reason and message.

    The Event's name is derived from what it says, so aggregation survives restarts of the engine.
    """
    reference = involved_reference(involved)
    message = message[:MAX_MESSAGE]
    name = event_name(reference, reason, message, type, component)
    namespace = reference.get("namespace") or "default"
    for _ in range(ATTEMPTS):
        now = timestamp(kube.clock.now())
        try:
            kube.create(new_event(name, namespace, reference, reason, message, type, component, now))
            return
        except AlreadyExists:
            pass
        if bump(kube, name, namespace, now):
            return
    raise Conflict(f"cannot record Event {namespace}/{name}: it kept changing")


def bump(kube: Kube, name: str, namespace: str, now: str) -> bool:
    """Count one more occurrence; False when the Event changed or vanished meanwhile."""
    current = kube.get("v1", "Event", name, namespace)
    if current is None:
        return False
    patch = {
        "metadata": {"resourceVersion": resource_version_of(current)},
        "count": int(current.get("count") or 1) + 1,
        "lastTimestamp": now,
    }
    try:
        kube.patch("v1", "Event", name, namespace, patch)
    except Conflict:
        return False
    return True


def involved_reference(involved: Mapping[str, Any]) -> dict[str, str]:
    api_version, kind, namespace, name = identity_of(involved)
    reference = {"apiVersion": api_version, "kind": kind, "name": name}
    if namespace:
        reference["namespace"] = namespace
    uid = (involved.get("metadata") or {}).get("uid")
    if uid:
        reference["uid"] = str(uid)
    return reference


def event_name(reference: Mapping[str, str], reason: str, message: str, type: str, component: str) -> str:
    """`<object name>.<digest of what the Event says>`, a valid object name."""
    said = json.dumps([dict(reference), reason, message, type, component], sort_keys=True)
    digest = hashlib.sha256(said.encode()).hexdigest()[:16]
    return f"{reference['name'][: _MAX_NAME - len(digest) - 1]}.{digest}"


def new_event(
    name: str, namespace: str, reference: Mapping[str, str], reason: str, message: str, type: str,
    component: str, now: str,
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": dict(reference),
        "reason": reason,
        "message": message,
        "type": type,
        "count": 1,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "source": {"component": component},
        "reportingComponent": component,
    }


def timestamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
