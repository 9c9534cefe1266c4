"""Informer: one kind's objects (all namespaces, or one) kept in memory by list + watch, resumed after cuts, relisted
on 410."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engine.errors import KplanError, TransientError
from engine.kube.compact import compact
from engine.kube.errors import Expired
from engine.kube.objects import copied, name_of, namespace_of, resource_version_of
from engine.kube.watching import Watch

if TYPE_CHECKING:
    from engine.kube.client import Kube

__all__ = ["Informer"]

log = logging.getLogger(__name__)

ADDED, MODIFIED, DELETED, BOOKMARK = "ADDED", "MODIFIED", "DELETED", "BOOKMARK"
BACKOFF_START, BACKOFF_MAX = 0.5, 30.0  # seconds between attempts while the server fails

Key = tuple[str, str]  # namespace ("" when cluster-scoped), name
Objects = list[dict[str, Any]]
Notify = Callable[[str, dict[str, Any], bool], None]  # (change, the cached object, whether a listing found it)


def key_of(obj: dict[str, Any]) -> Key:
    return namespace_of(obj) or "", name_of(obj)


def controller_uid(obj: dict[str, Any]) -> str:
    """The uid of the object's controller (its ownerReference with `controller: true`), "" when it has none."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller"):
            return str(ref.get("uid") or "")
    return ""


def by_controller(objects: dict[Key, dict[str, Any]]) -> dict[str, dict[Key, dict[str, Any]]]:
    index: dict[str, dict[Key, dict[str, Any]]] = {}
    for key, obj in objects.items():
        if uid := controller_uid(obj):
            index.setdefault(uid, {})[key] = obj
    return index


# Why not kubernetes.informer.SharedInformer: it needs a typed list function (it reads `resp.items` and
# `resp.metadata.resource_version` of generated models, so custom resources and dynamic kinds are out), it
# has no way to wait for the initial list (it lists in its thread and retries every 5 s), it fires MODIFIED
# for every unchanged object on a relist, and it sleeps on the system clock.
class Informer:
    """A cache of one kind, filled by `start()` (which lists before it returns) and kept by a watch thread.

    It keeps objects compacted (engine.kube.compact): managedFields entries without their field sets. With
    `namespace`, it holds that namespace's objects only (of a namespaced kind). With `watch_list`, it is filled by
    a watch that starts with the objects there are now (`sendInitialEvents`, served since Kubernetes 1.34), which
    it goes on following: one request where a list and a watch are two; a server that refuses it is listed."""

    def __init__(
        self, kube: Kube, api_version: str, kind: str, *, label_selector: str | None, notify: Notify,
        namespace: str | None = None, watch_list: bool = False,
    ) -> None:
        self.api_version, self.kind, self.label_selector = api_version, kind, label_selector
        self.namespace, self._watch_list = namespace, watch_list
        self._kube, self._notify = kube, notify
        self._objects: dict[Key, dict[str, Any]] = {}
        self._controlled: dict[str, dict[Key, dict[str, Any]]] | None = None  # by controller uid, once asked
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._version: str | None = None
        self._watch: Watch | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Fill the cache (a list's errors reach the caller), then keep watching in a daemon thread."""
        handed = self._watched_list() if self._watch_list else None
        if handed is None:
            self._relist()
        self._thread = threading.Thread(target=self._run, args=(handed,), name=f"informer-{self.kind}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        watch = self._watch
        if watch is not None:
            watch.stop()
        if self._thread is not None:
            self._thread.join()

    def get(self, namespace: str | None, name: str) -> dict[str, Any] | None:
        found = self.shared(namespace, name)
        return copied(found) if found is not None else None

    def shared(self, namespace: str | None, name: str) -> dict[str, Any] | None:
        """The cached object itself, not a copy: to read, never to change (a watch event replaces it whole). Without the
        lock (every read of a pass asks): one dict read is atomic, and a relist replaces the map whole."""
        return self._objects.get((namespace or "", name))

    def controlled(self, namespace: str, uid: str) -> list[dict[str, Any]]:
        """The cached objects themselves (to read, never to change) in `namespace` whose controller's uid is `uid`,
        sorted by key. From the first call on the informer keeps them indexed by controller, so a look-up costs what
        it finds, not the size of the cache (a step waiting on a Job reads its pods on every pass)."""
        with self._lock:
            if self._controlled is None:
                self._controlled = by_controller(self._objects)
            found = self._controlled.get(uid)
            return [found[key] for key in sorted(found) if key[0] == namespace] if found else []

    def list(self, namespace: str | None = None, where: Callable[[dict[str, Any]], bool] | None = None
             ) -> list[dict[str, Any]]:
        """Copies of the cached objects in `namespace` (all when None) that `where` accepts, sorted by key."""
        with self._lock:
            found = [obj for key, obj in self._objects.items() if namespace is None or key[0] == namespace]
        return [copied(obj) for obj in sorted(found, key=key_of) if where is None or where(obj)]

    def _run(self, handed: Watch | None = None) -> None:
        delay = BACKOFF_START
        while not self._stopped.is_set():
            try:
                if self._version is None:
                    self._relist()
                watch, handed = handed, None
                self._follow(watch)
                delay = BACKOFF_START
            except Expired:
                log.info("watch expired, listing again", extra={"kind": self.kind})
                self._version = None
            except Exception as exc:  # whatever failed, the cache must live on
                # One transient failure (a real server answers 429 "storage is (re)initializing" while a new
                # CRD's watch cache starts) is routine; a second in a row is worth a warning.
                level = logging.INFO if isinstance(exc, TransientError) and delay == BACKOFF_START \
                    else logging.WARNING
                log.log(level, "informer failed, retrying: %s", exc, extra={"kind": self.kind, "delay": delay},
                        exc_info=not isinstance(exc, KplanError))
                self._kube.clock.wait(self._stopped, delay)
                delay = min(delay * 2, BACKOFF_MAX)
        if handed is not None:  # stopped before it was followed
            handed.close()

    def _follow(self, watch: Watch | None = None) -> None:
        """Apply watch events until stopped (the watch resumes by itself after stream ends and cuts), of `watch` when
        one is handed on, else of a new one from the version the cache holds."""
        if watch is None:
            watch = self._kube.watch(self.api_version, self.kind, namespace=self.namespace,
                                     label_selector=self.label_selector, resource_version=self._version)
        self._watch = watch
        if self._stopped.is_set():  # stop() ran before the watch existed
            watch.stop()
        with watch:
            for change, obj in watch:
                self._version = watch.resource_version
                self._record(change, obj)
            self._version = watch.resource_version or self._version

    def _record(self, change: str, obj: dict[str, Any]) -> None:
        if change != DELETED:
            obj = compact(obj)
        key = key_of(obj)
        with self._lock:
            old = self._objects.pop(key, None) if change == DELETED else self._objects.get(key)
            if change != DELETED:
                self._objects[key] = obj
            if self._controlled is not None:
                self._reindex(key, old, None if change == DELETED else obj)
        self._notify(change, obj, False)

    def _reindex(self, key: Key, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        """Move `key` in the controller index from `old`'s controller to `new`'s (called holding the lock)."""
        index = self._controlled
        assert index is not None
        if old is not None and (was := controller_uid(old)) and (entries := index.get(was)) is not None:
            entries.pop(key, None)
            if not entries:
                del index[was]
        if new is not None and (uid := controller_uid(new)):
            index.setdefault(uid, {})[key] = new

    def _watched_list(self) -> Watch | None:
        """Fill the cache from a watch's initial events; the watch, to go on with, or None when the server refused it
        or its stream ended before the bookmark that ends them (then the caller lists)."""
        watch = self._kube.watch(self.api_version, self.kind, namespace=self.namespace,
                                 label_selector=self.label_selector, initial_events=True)
        self._watch = watch
        items: Objects = []
        try:
            for change, obj in watch:
                if change == BOOKMARK:
                    self._replace(items, watch.resource_version or "")
                    return watch
                items.append(obj)  # only ADDED events come before that bookmark
        except KplanError as err:
            log.info("watch list not served, listing: %s", err, extra={"kind": self.kind})
        watch.close()
        return None

    def _relist(self) -> None:
        """Replace the cache with a fresh list, notifying what changed since the last one."""
        self._replace(*self._kube.list_with_version(self.api_version, self.kind, self.namespace,
                                                    label_selector=self.label_selector))

    def _replace(self, items: Objects, version: str) -> None:
        """Make `items` (all there are, as of `version`) the cache, notifying what changed since the last fill."""
        fresh = {key_of(obj): compact(obj) for obj in items}
        with self._lock:
            old, self._objects = self._objects, fresh
            if self._controlled is not None:
                self._controlled = by_controller(fresh)
        self._version = version or None
        for key, obj in old.items():
            if key not in fresh:
                self._notify(DELETED, obj, True)
        for key, obj in fresh.items():
            if key not in old:
                self._notify(ADDED, obj, True)
            elif resource_version_of(old[key]) != resource_version_of(obj):
                self._notify(MODIFIED, obj, True)
