"""Caches: watch-backed read caches of whole kinds, shared by the controller and `kplan run`."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engine.kube.informer import Informer
from engine.kube.objects import copied

if TYPE_CHECKING:
    from engine.kube.client import Kube

__all__ = ["Caches", "Handler", "Reader"]

log = logging.getLogger(__name__)

Handler = Callable[[str, dict[str, Any]], None]  # (change, a copy of the object)
# (change, the cached object itself, listed: True when a listing found the change — the initial one or one after
# a watch expired —, False for a watch event)
Reader = Callable[[str, dict[str, Any], bool], None]
Key = tuple[str, str, str | None]  # apiVersion, kind, the namespace cached (None: all, or a cluster-scoped kind)


class Caches:
    """One informer per kind (all namespaces), started on first use; reads never go to the server.

    With `per_namespace`, a namespaced kind gets one informer per namespace it is read in instead (a list of all
    namespaces, one of its own): what drives one Instance (`kplan run`) lists and watches the namespaces it reads,
    not the whole cluster, so it lists less and needs no rights beyond them. With `watch_lists`, each informer
    starts with one watch that streams the objects there are first, instead of a list and a watch (Informer).

    A kind is cached with the label selector declared for it in `selectors` (whatever first reads it), else
    with that of its first `ensure`: objects the selector does not match are absent from the cache. Declare a
    selector when handlers may read the kind before it is ensured. Handlers run on the informers' threads and
    must not block. Cached objects keep of managedFields only each entry's manager, operation and subresource
    (engine.kube.compact): read an object with `Kube.get` for its field sets, and never write a cached object
    back whole.
    """

    def __init__(self, kube: Kube, *, selectors: dict[tuple[str, str], str] | None = None,
                 per_namespace: bool = False, watch_lists: bool = False) -> None:
        self._kube = kube
        self._selectors = dict(selectors or {})  # (apiVersion, kind) -> label selector
        self._per_namespace, self._watch_lists = per_namespace, watch_lists
        self._informers: dict[Key, Informer] = {}
        self._starting: dict[Key, threading.Lock] = {}
        self._filling: dict[Key, tuple[int, Informer]] = {}  # informers whose first list is being read
        self._handlers: list[Handler] = []
        self._readers: list[Reader] = []
        self._lock = threading.Lock()

    def ensure(self, api_version: str, kind: str, *, label_selector: str | None = None,
               namespace: str | None = None) -> None:
        """Cache `kind` from now on; returns once its initial list is in. ValueError on a different selector.
        `namespace` (default: the Kube's) is the one cached when `per_namespace`."""
        self._informer(api_version, kind, self._scope(api_version, kind, namespace or self._kube.namespace),
                       label_selector)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        """The cached object (a copy), None when absent; a namespaced kind defaults to the Kube's namespace."""
        found = self.shared(api_version, kind, name, namespace)
        return copied(found) if found is not None else None

    def shared(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        """`get` without the copy: the cached object itself, which the caller must only read."""
        namespaced = self._kube.resource(api_version, kind).namespaced
        where = (namespace or self._kube.namespace) if namespaced else None
        return self._informer(api_version, kind, where if self._per_namespace else None).shared(where, name)

    def controlled(self, api_version: str, kind: str, namespace: str, uid: str) -> list[dict[str, Any]]:
        """The cached objects of `kind` in `namespace` whose controller's uid is `uid` (themselves, as `shared`
        gives them: to read only), sorted by name; found through an index, not by reading every cached object."""
        return self._informer(api_version, kind, self._scope(api_version, kind, namespace)).controlled(namespace, uid)

    def list(self, api_version: str, kind: str, namespace: str | None = None,
             where: Callable[[dict[str, Any]], bool] | None = None) -> list[dict[str, Any]]:
        """Cached objects (copies) in `namespace`, or in all namespaces when None, sorted by namespace/name;
        with `where`, only those it accepts (it reads the cached object itself and must not change it)."""
        return self._informer(api_version, kind, self._scope(api_version, kind, namespace)).list(namespace, where)

    def add_handler(self, callback: Handler) -> None:
        """Call `callback(type, object)` for every ADDED, MODIFIED and DELETED of every cached kind."""
        with self._lock:
            self._handlers.append(callback)

    def add_reader(self, callback: Reader) -> None:
        """Call `callback(type, object, listed)` for every change, like a handler, with the cached object itself
        (which it must only read: no copy is made) and whether a listing rather than a watch event found it."""
        with self._lock:
            self._readers.append(callback)

    def stop(self) -> None:
        with self._lock:
            informers = list(self._informers.values())
            self._informers.clear()
        for informer in informers:
            informer.stop()

    def _scope(self, api_version: str, kind: str, namespace: str | None) -> str | None:
        """The namespace whose informer serves a read of `kind` in `namespace` (None: the one of all namespaces)."""
        if not self._per_namespace or namespace is None:
            return None
        return namespace if self._kube.resource(api_version, kind).namespaced else None

    def _informer(self, api_version: str, kind: str, scope: str | None = None,
                  label_selector: str | None = None) -> Informer:
        key = (api_version, kind, scope)
        # A kind cached already (every read of a pass after the first): no lock to take and no lock made for its
        # start (a dict read is atomic; the informer is only ever replaced by stop(), which empties the map).
        started = self._informers.get(key)
        if started is not None and (label_selector is None or started.label_selector == label_selector):
            return started
        with self._lock:
            starting = self._starting.setdefault(key, threading.Lock())
            filling = self._filling.get(key)
        if filling is not None and filling[0] == threading.get_ident():
            # A handler of this kind's first list reads the kind: its list is in (handlers are told after it).
            informer = filling[1]
        else:
            with starting:  # one start per kind; other kinds start concurrently
                with self._lock:
                    found = self._informers.get(key)
                informer = found if found is not None else self._started(key, label_selector)
        if label_selector is not None and informer.label_selector != label_selector:
            raise ValueError(f"{kind} is already cached with label selector {informer.label_selector!r}")
        return informer

    def _started(self, key: Key, label_selector: str | None) -> Informer:
        """A new informer of `key`, its first list in (called holding the kind's start lock)."""
        api_version, kind, scope = key
        selector = label_selector if label_selector is not None else self._selectors.get((api_version, kind))
        informer = Informer(self._kube, api_version, kind, label_selector=selector, notify=self._notify,
                            namespace=scope, watch_list=self._watch_lists)
        with self._lock:
            self._filling[key] = (threading.get_ident(), informer)
        try:
            informer.start()
        finally:
            with self._lock:
                del self._filling[key]
        with self._lock:
            self._informers[key] = informer
        return informer

    def _notify(self, change: str, obj: dict[str, Any], listed: bool) -> None:
        with self._lock:
            handlers, readers = list(self._handlers), list(self._readers)
        for reader in readers:
            try:
                reader(change, obj, listed)
            except Exception:  # one failing reader must not starve the others or kill the informer
                log.exception("cache reader failed", extra={"change": change, "kind": obj.get("kind")})
        for handler in handlers:
            try:
                handler(change, copied(obj))
            except Exception:  # one failing handler must not starve the others or kill the informer
                log.exception("cache handler failed", extra={"change": change, "kind": obj.get("kind")})
