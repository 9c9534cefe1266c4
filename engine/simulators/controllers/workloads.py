"""What the workload controllers share: template hashes, owner references, replica counts, omitempty statuses."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator
from typing import Any

from engine.simulators.api import Kind, ref_of
from engine.simulators.runtime import Ref

JsonDict = dict[str, Any]
MANAGER = "kube-controller-manager"
SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand.SafeEncodeString


def fnv32a(data: bytes) -> int:
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def template_hash(template: Any) -> str:
    """A pod-template-hash: FNV-32a of the template, its decimal digits safe-encoded (as the controllers do)."""
    return _hash_of(json.dumps(template, sort_keys=True, separators=(",", ":")))


@functools.lru_cache(maxsize=4096)
def _hash_of(text: str) -> str:
    """The hash of a template's JSON (a byte at a time in Python: remembered, each reconcile asks again)."""
    digits = str(fnv32a(text.encode()))
    return "".join(SAFE_ALPHABET[ord(c) % len(SAFE_ALPHABET)] for c in digits)


def owner_reference(kind: Kind, owner: JsonDict) -> JsonDict:
    meta = owner["metadata"]
    return {"apiVersion": kind.api_version, "kind": kind.kind, "name": meta["name"], "uid": meta["uid"],
            "controller": True, "blockOwnerDeletion": True}


def controller_of(obj: JsonDict, kind: Kind) -> str | None:
    """The name of the object's controlling owner if it is of `kind`."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == kind.kind and \
                str(ref.get("apiVersion", "")).split("/")[0] == kind.api_version.split("/")[0]:
            return str(ref.get("name"))
    return None


def keys_for(obj: JsonDict, kind: Kind, child: Kind) -> Iterator[Ref]:
    """The key to reconcile when `obj` changes: itself if it is a `kind`, its controlling `kind` if it is a `child`."""
    if kind.describes(obj):
        yield ref_of(obj)
    elif child.describes(obj) and (owner := controller_of(obj, kind)):
        yield ref_of(obj)[0], owner


def controlled_by(obj: JsonDict, owner_uid: str) -> bool:
    return any(r.get("controller") and r.get("uid") == owner_uid
               for r in (obj.get("metadata") or {}).get("ownerReferences") or [])


def desired_replicas(obj: JsonDict) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return int(value) if isinstance(value, int) else 1


def omit_zero(status: JsonDict, keep: Iterable[str] = ()) -> JsonDict:
    """Drop int fields that are 0 (Go's omitempty), except those listed in `keep`."""
    kept = set(keep)
    return {k: v for k, v in status.items() if k in kept or not (isinstance(v, int) and not isinstance(v, bool)
                                                                  and v == 0)}


def generation_of(obj: JsonDict) -> int:
    return int((obj.get("metadata") or {}).get("generation") or 1)
