"""What the planner sees of the cluster: a read-through view of the watch caches, overlaid with our own writes.

A watch cache lags behind the writes that produced it. Objects this process just wrote (applies, status
writes) are remembered until the cache has caught up with them, so a pass that runs before the watch
event arrived does not mistake a just-applied object for a missing or drifted one.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar, overload

from engine.kube import Caches, NotFound
from engine.planner import Ref

__all__ = ["ObservedView", "RecentWrites", "newer"]

Json = dict[str, Any]
T = TypeVar("T")
UNSEEN: Any = object()  # ObservedView: not read yet this pass


def version_of(obj: Mapping[str, Any] | None) -> int | None:
    """The resourceVersion as a number, when it is one (it is opaque, but every server we know counts)."""
    text = str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "")
    return int(text) if text.isdigit() else None


def newer(cached: Json | None, written: Json | None) -> Json | None:
    """The fresher of the cached object and the one our write returned (the cache, when they cannot be ordered)."""
    if written is None:
        return cached
    mine, theirs = version_of(written), version_of(cached)
    if cached is None or (mine is not None and theirs is not None and mine > theirs):
        return written
    return cached


def gone(obj: Mapping[str, Any]) -> bool:
    """Deleted and held by no finalizer: the object no longer exists."""
    meta = obj.get("metadata") or {}
    return bool(meta.get("deletionTimestamp")) and not meta.get("finalizers")


class RecentWrites:
    """Objects as our own writes returned them, kept until the cache shows them or something newer."""

    def __init__(self) -> None:
        self._objects: dict[Ref, Json] = {}
        self._lock = threading.Lock()

    def remember(self, obj: Json) -> None:
        """Keep `obj` as written; a write that released the last finalizer of a deleted object left nothing to keep
        (the server removed it as it answered, and its DELETED event may already have passed)."""
        with self._lock:
            if gone(obj):
                self._objects.pop(Ref.of(obj), None)
            else:
                self._objects[Ref.of(obj)] = obj

    def forget(self, ref: Ref) -> None:
        with self._lock:
            self._objects.pop(ref, None)

    def resolve(self, ref: Ref, cached: Json | None) -> Json | None:
        """The object to believe for `ref`; a write the cache caught up with is forgotten. Most refs a pass reads hold
        no write: that is known without the lock (one dict read is atomic; a write remembered meanwhile is one the
        caller's read of the cache could not have seen either)."""
        if ref not in self._objects:
            return cached
        with self._lock:
            written = self._objects.get(ref)
            chosen = newer(cached, written)
            if written is not None and chosen is cached:
                del self._objects[ref]
        return chosen

    def observe(self, change: str, obj: Json) -> None:
        """A cache handler: drop what a watch event supersedes (a deletion, or a version at least as new)."""
        ref = Ref.of(obj)
        with self._lock:
            written = self._objects.get(ref)
            if written is None:
                return
            mine, theirs = version_of(written), version_of(obj)
            if change == "DELETED" or mine is None or (theirs is not None and theirs >= mine):
                del self._objects[ref]

    def __len__(self) -> int:
        with self._lock:
            return len(self._objects)


class ObservedView(Mapping[Ref, Json]):
    """`observed` for the planner: each lookup reads the cache of its kind (started on first use).

    A kind the server does not serve reads as absent. Iteration covers only the objects looked up so far.
    Lookups hand out the cached objects themselves (the planner only reads what it observes); pods are copies.
    """

    def __init__(self, caches: Caches, recent: RecentWrites) -> None:
        self._caches, self._recent = caches, recent
        self._seen: dict[Ref, Json | None] = {}

    def __getitem__(self, ref: Ref) -> Json:
        found = self._lookup(ref)
        if found is None:
            raise KeyError(ref)
        return found

    @overload
    def get(self, ref: Ref, /) -> Json | None: ...

    @overload
    def get(self, ref: Ref, default: Json | T, /) -> Json | T: ...

    def get(self, ref: Ref, default: Any = None, /) -> Any:
        """`observed.get(ref)`, the planner's most frequent read: straight to the lookup (Mapping.get would go through
        `__getitem__` and raise and catch KeyError for every absent object)."""
        found = self._lookup(ref)
        return default if found is None else found

    def __contains__(self, ref: object) -> bool:
        return isinstance(ref, Ref) and self._lookup(ref) is not None

    def __iter__(self) -> Iterator[Ref]:
        return iter([ref for ref, obj in self._seen.items() if obj is not None])

    def __len__(self) -> int:
        return sum(1 for obj in self._seen.values() if obj is not None)

    def controlled_pods(self, owner: Mapping[str, Any]) -> list[Json]:
        """The cached pods in `owner`'s namespace whose controller is `owner` (engine.planner.pods.PodLister)."""
        meta = owner.get("metadata") or {}
        uid, namespace = meta.get("uid"), meta.get("namespace")
        if not uid or not namespace:
            return []
        return self._caches.controlled("v1", "Pod", str(namespace), str(uid))

    def _lookup(self, ref: Ref) -> Json | None:
        """One read per ref and pass, so a decision sees one consistent answer for each object (a first read costs no
        KeyError raised and caught: a pass over a long plan reads every object of it once)."""
        found: Json | None = self._seen.get(ref, UNSEEN)
        if found is UNSEEN:
            found = self._seen[ref] = self._recent.resolve(ref, self._cached(ref))
        return found

    def _cached(self, ref: Ref) -> Json | None:
        try:
            return self._caches.shared(ref.api_version, ref.kind, ref.name, ref.namespace)
        except NotFound:  # the kind is not served (yet): nothing of it exists
            return None
