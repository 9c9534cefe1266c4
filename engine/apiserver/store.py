"""The object store: objects by resource/namespace/name, one global resourceVersion, event history, subscribers.

Stored dicts are never mutated after they are committed; readers may share them and copy before changing.
Callers that read, decide and write hold `store.lock` (re-entrant) around the whole sequence.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from engine.apiserver.objects import JsonDict, name_of, namespace_of, owner_refs, uid_of

ADDED, MODIFIED, DELETED = "ADDED", "MODIFIED", "DELETED"

ObjectRef = tuple[str, str, str]  # storage key, namespace ("" when cluster-scoped), name


@dataclass(frozen=True)
class Event:
    """One committed change; `old` is the previous state (None on ADDED)."""

    type: str
    key: str
    obj: JsonDict
    old: JsonDict | None

    @property
    def rv(self) -> int:
        return int(self.obj["metadata"]["resourceVersion"])


META_ORDER = {k: i for i, k in enumerate((
    "name", "generateName", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
    "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers",
    "managedFields"))}
TOP_ORDER = {"apiVersion": 0, "kind": 1, "metadata": 2}


def canonical_order(obj: JsonDict) -> None:
    """Key order as the real server writes it (apiVersion, kind, metadata first; metadata fields in Go order)."""
    meta = obj["metadata"]
    ordered = sorted(meta.items(), key=lambda kv: META_ORDER.get(kv[0], len(META_ORDER)))
    meta.clear()
    meta.update(ordered)
    top = sorted(obj.items(), key=lambda kv: TOP_ORDER.get(kv[0], 3))
    obj.clear()
    obj.update(top)


class TooOld(Exception):
    """The requested resourceVersion is older than the retained history."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")


class Subscription:
    """A queue of events (None = closed) filled in commit order while the store lock is held."""

    def __init__(self, store: Store, keys: tuple[str | None, ...]) -> None:
        self.keys = keys  # the resources whose events it gets (None: every resource)
        self.queue: queue.SimpleQueue[Event | None] = queue.SimpleQueue()
        self._store = store
        self.closed = False

    def get(self, timeout: float | None) -> Event | None:
        """The next event; None when closed; raises queue.Empty after `timeout` seconds."""
        return self.queue.get(timeout=timeout)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._store.unsubscribe(self)
            self.queue.put(None)


class Store:
    def __init__(self, history: int = 10000) -> None:
        self.lock = threading.RLock()
        self._objects: dict[str, dict[str, dict[str, JsonDict]]] = {}
        self._uids: dict[str, ObjectRef] = {}
        self._dependents: dict[str, set[ObjectRef]] = {}
        self._history: deque[Event] = deque(maxlen=max(1, history))
        self._floor = 0
        self._rv = 0
        self._subs: dict[str | None, list[Subscription]] = {}
        self._observers: dict[str | None, list[Callable[[Event], None]]] = {}
        self.on_commit: list[Callable[[Event], None]] = []  # called under the lock, before subscribers

    @property
    def revision(self) -> int:
        return self._rv

    @property
    def history_floor(self) -> int:
        """Events up to this resourceVersion are no longer retained."""
        return self._floor

    # reads

    def get(self, key: str, namespace: str, name: str) -> JsonDict | None:
        return self._objects.get(key, {}).get(namespace, {}).get(name)

    def items(self, key: str, namespace: str | None = None) -> list[JsonDict]:
        """Objects of one resource (in one namespace, or all), sorted by namespace and name."""
        with self.lock:
            spaces = self._objects.get(key, {})
            if namespace is not None:
                return [spaces.get(namespace, {})[n] for n in sorted(spaces.get(namespace, {}))]
            return [spaces[ns][n] for ns in sorted(spaces) for n in sorted(spaces[ns])]

    def count(self, key: str, namespace: str) -> int:
        return len(self._objects.get(key, {}).get(namespace, {}))

    def keys_in_namespace(self, namespace: str) -> list[str]:
        with self.lock:
            return sorted(k for k, spaces in self._objects.items() if spaces.get(namespace))

    def locate(self, uid: str) -> ObjectRef | None:
        return self._uids.get(uid)

    def dependents(self, owner_uid: str) -> list[ObjectRef]:
        with self.lock:
            return sorted(self._dependents.get(owner_uid, ()))

    # writes: each takes a fresh dict, stamps the next resourceVersion and publishes an event

    def create(self, key: str, obj: JsonDict) -> JsonDict:
        with self.lock:
            self._stamp(obj)
            self._put(key, obj)
            self._publish(Event(ADDED, key, obj, None))
            return obj

    def update(self, key: str, obj: JsonDict) -> JsonDict:
        with self.lock:
            old = self.get(key, namespace_of(obj), name_of(obj))
            if old is None:
                raise KeyError(name_of(obj))
            self._stamp(obj)
            self._unindex(key, old)
            self._put(key, obj)
            self._publish(Event(MODIFIED, key, obj, old))
            return obj

    def remove(self, key: str, last: JsonDict) -> JsonDict:
        """Delete the object; `last` is its final state, stamped with the deletion's resourceVersion."""
        with self.lock:
            ns, name = namespace_of(last), name_of(last)
            old = self._objects.get(key, {}).get(ns, {}).pop(name)
            if not self._objects[key][ns]:
                del self._objects[key][ns]
            self._unindex(key, old)
            self._stamp(last)
            self._publish(Event(DELETED, key, last, old))
            return last

    def _stamp(self, obj: JsonDict) -> None:
        self._rv += 1
        obj.setdefault("metadata", {})["resourceVersion"] = str(self._rv)
        canonical_order(obj)

    def _put(self, key: str, obj: JsonDict) -> None:
        ns, name = namespace_of(obj), name_of(obj)
        self._objects.setdefault(key, {}).setdefault(ns, {})[name] = obj
        ref = (key, ns, name)
        uid = uid_of(obj)
        if uid:
            self._uids[uid] = ref
        for owner in owner_refs(obj):
            self._dependents.setdefault(str(owner.get("uid")), set()).add(ref)

    def _unindex(self, key: str, obj: JsonDict) -> None:
        ref = (key, namespace_of(obj), name_of(obj))
        if self._uids.get(uid_of(obj)) == ref:
            del self._uids[uid_of(obj)]
        for owner in owner_refs(obj):
            deps = self._dependents.get(str(owner.get("uid")))
            if deps is not None:
                deps.discard(ref)
                if not deps:
                    del self._dependents[str(owner.get("uid"))]

    # history and subscribers

    def _publish(self, event: Event) -> None:
        if len(self._history) == self._history.maxlen:
            self._floor = self._history[0].rv
        self._history.append(event)
        for hook in self.on_commit:
            hook(event)
        for key in (event.key, None):
            for observer in self._observers.get(key, ()):
                observer(event)
            for sub in self._subs.get(key, ()):
                sub.queue.put(event)

    def history_since(self, key: str, since: int) -> list[Event]:
        """Retained events of one resource after `since`, oldest first; TooOld if some were dropped."""
        with self.lock:
            if since < self._floor:
                raise TooOld(since, self._floor)
            found: list[Event] = []
            for event in reversed(self._history):
                if event.rv <= since:
                    break
                if event.key == key:
                    found.append(event)
            found.reverse()
            return found

    def subscribe(self, key: str | None) -> Subscription:
        """Events of one resource (or of all, with key None) from now on."""
        return self.subscribe_to((key,))

    def subscribe_to(self, keys: Iterable[str | None]) -> Subscription:
        """Events of some resources (None among them: of all) from now on; a thread waits only for those."""
        with self.lock:
            sub = Subscription(self, tuple(dict.fromkeys(keys)))
            for key in sub.keys:
                self._subs[key] = [*self._subs.get(key, ()), sub]
            return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self.lock:
            for key in sub.keys:
                self._subs[key] = [s for s in self._subs.get(key, ()) if s is not sub]

    def observe(self, keys: Iterable[str | None], observer: Callable[[Event], None]) -> Callable[[], None]:
        """Call `observer` with each event of some resources (None: of all) as it is committed: in the writer's
        thread, under the store lock, so it must be quick and never write. Returns the function that stops it."""
        chosen = tuple(dict.fromkeys(keys))
        with self.lock:
            for key in chosen:
                self._observers[key] = [*self._observers.get(key, ()), observer]

        def stop() -> None:
            with self.lock:
                for key in chosen:
                    self._observers[key] = [o for o in self._observers.get(key, ()) if o is not observer]

        return stop

    def close_all(self) -> None:
        with self.lock:
            subs = [s for group in self._subs.values() for s in group]
        for sub in subs:
            sub.close()

