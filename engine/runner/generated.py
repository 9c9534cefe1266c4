"""Storing generated parameter values: made here, once, and added to the Instance's Secret without replacing any."""

from __future__ import annotations

import base64
from typing import Any

from engine import generating
from engine.errors import PermanentError
from engine.kube import AlreadyExists, Conflict, Kube
from engine.planner import GenerateParameters
from engine.planner.generated import owned_by

__all__ = ["store"]

ATTEMPTS = 5  # writes racing another writer of the same Secret
SECRET = ("v1", "Secret")
Json = dict[str, Any]


def store(kube: Kube, action: GenerateParameters) -> Json:
    """The Secret with a value for every wanted name: created with fresh values when absent, else completed
    with values for the names it lacks (under its resourceVersion). A Secret of that name that the Instance
    does not own is left alone and refused."""
    meta = action.secret["metadata"]
    name, namespace = str(meta["name"]), str(meta["namespace"])
    uid = str(meta["ownerReferences"][0]["uid"])
    for _ in range(ATTEMPTS):
        live = kube.get(*SECRET, name, namespace)
        if live is None:
            try:
                return kube.create({**action.secret, "data": fresh(action.wanted)})
            except AlreadyExists:
                continue
        if not owned_by(live, uid):
            raise PermanentError(f"Secret {namespace}/{name} exists and does not belong to this Instance, so its "
                                 "generated parameter values cannot be kept there; delete or rename that Secret")
        lacking = tuple((k, g) for k, g in action.wanted if k not in (live.get("data") or {}))
        if not lacking:
            return live
        patch = {"metadata": {"resourceVersion": (live.get("metadata") or {}).get("resourceVersion")},
                 "data": fresh(lacking)}
        try:
            return kube.patch(*SECRET, name, namespace, patch)
        except Conflict:
            continue
    raise Conflict(f"Secret {namespace}/{name} kept changing while generated values were added")


def fresh(wanted: tuple[tuple[str, generating.Generated], ...]) -> dict[str, str]:
    return {name: base64.b64encode(generating.make(how).encode()).decode() for name, how in wanted}
