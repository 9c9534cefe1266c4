"""What the simulators know of the cluster: the objects of the kinds they watch, kept current by committed changes.

Like an informer's store, fed in commit order by the cluster's subscription and, right after each of the
simulators' own writes, by the object the write returned, so a controller never misses what it just did. A change
is kept only if it is newer (a higher resourceVersion) than what is cached; a deleted uid never comes back.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence

from engine.simulators.api import JsonDict, Kind

TOMBSTONES = 100_000  # deleted uids remembered, against late answers to writes racing their deletion

Slot = tuple[str, str]  # namespace, name


def rv_of(obj: JsonDict) -> int:
    value = (obj.get("metadata") or {}).get("resourceVersion")
    return int(value) if isinstance(value, str) and value.isdigit() else 0


def slot_of(obj: JsonDict) -> Slot:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def owner_uids(obj: JsonDict) -> set[str]:
    return {str(r.get("uid")) for r in (obj.get("metadata") or {}).get("ownerReferences") or [] if r.get("uid")}


class Cache:
    """Objects by kind, namespace and name, with an index of dependents by owner uid."""

    def __init__(self, kinds: Sequence[Kind]) -> None:
        self._kinds = {(k.api_version, k.kind): k for k in kinds}
        self._lock = threading.Lock()
        self._objects: dict[Kind, dict[Slot, JsonDict]] = {k: {} for k in kinds}
        self._owned: dict[str, set[tuple[Kind, Slot]]] = {}
        self._deleted: OrderedDict[str, None] = OrderedDict()

    @property
    def kinds(self) -> list[Kind]:
        return list(self._objects)

    def kind_of(self, obj: JsonDict) -> Kind | None:
        return self._kinds.get((str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")))

    def observe(self, event: str, obj: JsonDict) -> None:
        """A committed change, as the subscription delivers it."""
        kind = self.kind_of(obj)
        if kind is None:
            return
        if event == "DELETED":
            self._drop(kind, obj)
        else:
            self._store(kind, obj)

    def remember(self, kind: Kind, obj: JsonDict) -> None:
        """The answer to one of the simulators' own writes (ignored for kinds not cached)."""
        if kind in self._objects and obj.get("metadata"):
            self._store(kind, obj)

    def _store(self, kind: Kind, obj: JsonDict) -> None:
        slot, uid = slot_of(obj), str(obj["metadata"].get("uid") or "")
        with self._lock:
            if uid in self._deleted:
                return
            current = self._objects[kind].get(slot)
            if current is not None and rv_of(current) >= rv_of(obj):
                return
            if current is not None:
                self._unindex(kind, slot, current)
            self._objects[kind][slot] = obj
            for owner in owner_uids(obj):
                self._owned.setdefault(owner, set()).add((kind, slot))

    def _drop(self, kind: Kind, obj: JsonDict) -> None:
        slot, uid = slot_of(obj), str(obj["metadata"].get("uid") or "")
        with self._lock:
            self._deleted[uid] = None
            if len(self._deleted) > TOMBSTONES:
                self._deleted.popitem(last=False)
            current = self._objects[kind].get(slot)
            if current is not None and str(current["metadata"].get("uid") or "") == uid:
                self._unindex(kind, slot, current)
                del self._objects[kind][slot]

    def _unindex(self, kind: Kind, slot: Slot, obj: JsonDict) -> None:
        for owner in owner_uids(obj):
            dependents = self._owned.get(owner)
            if dependents is not None:
                dependents.discard((kind, slot))
                if not dependents:
                    del self._owned[owner]

    def get(self, kind: Kind, namespace: str, name: str) -> JsonDict | None:
        with self._lock:
            return self._objects[kind].get((namespace, name))

    def objects(self, kind: Kind, namespace: str | None = None) -> list[JsonDict]:
        """Objects of a kind (in one namespace, or all), sorted by namespace and name."""
        with self._lock:
            found = [(slot, obj) for slot, obj in self._objects[kind].items()
                     if namespace is None or slot[0] == namespace]
        return [obj for _, obj in sorted(found, key=lambda pair: pair[0])]

    def owned_by(self, kind: Kind, owner_uid: str) -> list[JsonDict]:
        """Objects of a kind with an ownerReference to `owner_uid`."""
        with self._lock:
            slots = sorted(slot for k, slot in self._owned.get(owner_uid, ()) if k == kind)
            return [self._objects[kind][slot] for slot in slots if slot in self._objects[kind]]

    def fill(self, kind: Kind, objects: Iterable[JsonDict]) -> None:
        for obj in objects:
            self._store(kind, obj)
