"""What a watch cache keeps of an object: all of it but managedFields' field sets, with its strings shared.

A cache holds every object of its kinds for as long as the process runs, so what it keeps of one object is most of
the manager's memory per Instance. Two things made up most of that: managedFields' field sets (`fieldsV1`, about
half of an applied object's size), of which the engine reads only who applied the object (each entry's manager
and operation; a handover of fields reads the object afresh); and the same keys and values — `metadata`,
`status`, "True", a timestamp — decoded again as separate strings from every watch event. A compacted object
keeps of each managedFields entry its manager, operation and subresource, and shares its keys and short strings
with every other cached object (`sys.intern`: a string no object uses any more is freed).

A compacted object must never be written back whole: its managedFields would replace the server's.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["KEPT_ENTRY_FIELDS", "compact"]

KEPT_ENTRY_FIELDS = ("manager", "operation", "subresource")  # of each managedFields entry
SHARED_LENGTH = 64  # longer strings (messages, certificates, file contents) seldom repeat: left as they are

_intern = sys.intern


def compact(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` as a cache keeps it (a new object; `obj` is left as it was)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get("managedFields"), list):
        entries = [{k: e[k] for k in KEPT_ENTRY_FIELDS if k in e} if isinstance(e, dict) else e
                   for e in meta["managedFields"]]
        obj = {**obj, "metadata": {**meta, "managedFields": entries}}
    found: dict[str, Any] = shared(obj)
    return found


def shared(value: Any) -> Any:
    """A copy of JSON-shaped `value` whose keys and short strings are the interned ones."""
    kind = value.__class__
    if kind is dict:
        return shared_map(value)
    if kind is list:
        return [shared(v) for v in value]
    if kind is str and len(value) <= SHARED_LENGTH:
        return _intern(value)
    return value


# `shared` of a map unrolled one level: a scalar value, most of an object, costs no call (a third of the time of an
# informer's copy of each event's object).
def shared_map(value: dict[Any, Any]) -> dict[Any, Any]:
    copy = {}
    for key, item in value.items():
        kind = item.__class__
        if kind is str:
            if len(item) <= SHARED_LENGTH:
                item = _intern(item)
        elif kind is dict:
            item = shared_map(item)
        elif kind is list:
            item = [shared(v) for v in item]
        copy[_intern(key) if key.__class__ is str else key] = item
    return copy
