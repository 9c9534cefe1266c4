"""Which Instance an object belongs to, the field manager each Instance applies with, and what changes hands.

Every Instance applies with a field manager of its own (`kplan/<namespace>/<name>`), so the API server
reports a conflict when two Instances set the same field differently. Before that, the planner refuses to
apply an object that already belongs to another Instance (by its ownerReference or its kplan labels),
unless the task has `force: true`: then the object is adopted, the other Instance's fields handed over.
Instances applied by kplan versions before per-Instance managers used the one manager `kplan`; on an object
labelled with this Instance, that manager's fields are this Instance's and are handed over on the next apply.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.planner.refs import Ref
from engine.render.stamping import LABEL_INSTANCE

__all__ = [
    "INSTANCE_NAMESPACE",
    "LEGACY_MANAGER",
    "Claim",
    "Handover",
    "appliers",
    "claim_of",
    "field_manager",
    "foreign_claim",
    "handover",
]

LEGACY_MANAGER = "kplan"  # the field manager of every Instance before per-Instance managers
MANAGER_PREFIX = "kplan/"
MAX_MANAGER = 128  # the API server's limit on a field manager's length
INSTANCE_NAMESPACE = "kplan.dev/instance-namespace"  # set on objects without an ownerReference to their Instance
INSTANCE_GROUP = "kplan.dev/"


@dataclass(frozen=True)
class Claim:
    """The Instance an object belongs to; `namespace` is None when the object does not say (old label-only ones)."""

    namespace: str | None
    name: str

    def __str__(self) -> str:
        return f"Instance {self.namespace}/{self.name}" if self.namespace else f"Instance {self.name}"

    def is_instance(self, namespace: str, name: str) -> bool:
        return self.name == name and self.namespace in (None, namespace)


@dataclass(frozen=True)
class Handover:
    """Before applying `ref`, the fields that `managers` own on it become the applying Instance's."""

    ref: Ref
    managers: tuple[str, ...]


def field_manager(namespace: str, name: str) -> str:
    """`kplan/<namespace>/<name>`; one longer than the API server allows is cut and ends in a digest of the whole."""
    full = f"{MANAGER_PREFIX}{namespace}/{name}"
    if len(full) <= MAX_MANAGER:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:10]
    return f"{full[:MAX_MANAGER - len(digest) - 1]}-{digest}"


def claim_of(obj: Mapping[str, Any]) -> Claim | None:
    """The Instance `obj` belongs to: its Instance ownerReference (the controller first), else its kplan labels
    (and the annotation naming the Instance's namespace, which objects outside that namespace carry)."""
    found = claimant(obj)
    return None if found is None else Claim(*found)


def claimant(obj: Mapping[str, Any]) -> tuple[str | None, str] | None:
    """`claim_of(obj)` as (namespace, name), without building the Claim (every pass asks for each object)."""
    meta = obj.get("metadata") or {}
    owner = instance_owner(meta.get("ownerReferences") or ())
    if owner is not None:
        return str(meta.get("namespace") or ""), str(owner.get("name") or "")
    name = (meta.get("labels") or {}).get(LABEL_INSTANCE)
    if not name:
        return None
    namespace = (meta.get("annotations") or {}).get(INSTANCE_NAMESPACE)
    return str(namespace) if namespace else None, str(name)


def instance_owner(references: Iterable[Any]) -> Mapping[str, Any] | None:
    """The Instance ownerReference among `references`: the controller, else the first (a loop, not a list: every
    pass asks for each object of a plan)."""
    first = None
    for ref in references:
        if (ref.__class__ is dict or isinstance(ref, Mapping)) and ref.get("kind") == "Instance" \
                and str(ref.get("apiVersion") or "").startswith(INSTANCE_GROUP):
            if ref.get("controller"):
                return ref
            first = first or ref
    return first


def foreign_claim(live: Mapping[str, Any] | None, namespace: str, name: str) -> Claim | None:
    """The other Instance that `live` belongs to, or None (absent, unclaimed, or Instance `namespace/name`'s).

    Known from FOREIGN for a version of an object seen before (every pass asks it of each object the Instance
    keeps, unchanged most of the time)."""
    if live is None:
        return None
    meta = live.get("metadata") or EMPTY
    uid, version = meta.get("uid"), meta.get("resourceVersion")
    key = (uid, version, namespace, name) if uid and version else None
    if key is not None:
        kept = FOREIGN.get(key, UNKNOWN)
        if kept is not UNKNOWN:
            return kept
    found = claimant(live)
    claim = None if found is None or (found[1] == name and found[0] in (None, namespace)) else Claim(*found)
    if key is not None:
        if len(FOREIGN) >= FOREIGN_SIZE:
            FOREIGN.clear()
        FOREIGN[key] = claim
    return claim


# foreign_claim by the uid and resourceVersion of the live object (which name one content of it: the server's) and
# the asking Instance's namespace and name; cleared when full. One dict read or write is atomic: no lock.
FOREIGN: dict[tuple[Any, Any, str, str], Claim | None] = {}
FOREIGN_SIZE = 16384
UNKNOWN = Claim(None, "")  # FOREIGN.get: not known
EMPTY: Mapping[str, Any] = {}


def handover(ref: Ref, live: Mapping[str, Any] | None, namespace: str, name: str, *, adopt: bool) -> Handover | None:
    """The managers whose fields on `live` Instance `namespace/name` takes when it applies: the legacy manager's
    on its own objects, and with `adopt` the other Instance's on an object of another Instance; None: no one's."""
    if live is None:
        return None
    claim = claim_of(live)
    if claim is None:
        return None
    if claim.is_instance(namespace, name):
        wanted = {LEGACY_MANAGER}
    elif adopt:
        wanted = {LEGACY_MANAGER, field_manager(claim.namespace or namespace, claim.name)}
    else:
        return None
    present = tuple(sorted(m for m in appliers(live) if m in wanted))
    return Handover(ref, present) if present else None


def appliers(obj: Mapping[str, Any]) -> set[str]:
    """The managers of `obj`'s server-side applies."""
    entries = (obj.get("metadata") or {}).get("managedFields") or []
    return {str(e.get("manager")) for e in entries if isinstance(e, Mapping) and e.get("operation") == "Apply"}
