"""The simulators' event loop: committed changes → keys of the controllers they concern → a worker that reconciles."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, Protocol

from engine.simulators.api import Api, ApiFailure, ClusterApi, Conflict, Gone
from engine.simulators.cache import Cache
from engine.simulators.timers import Timers
from engine.simulators.workqueue import Key, WorkQueue

log = logging.getLogger(__name__)

JsonDict = dict[str, Any]
Ref = tuple[str, str]  # namespace ("" when cluster-scoped), name
EVERYTHING = "*"  # a key name that asks the controller to list its objects and queue each
STOP_WAIT = 10.0  # seconds stop() waits for the worker to finish its current key
DEFERRED_LIMIT = 100  # Events kept back while keys wait, at most


class Controller(Protocol):
    """One simulated controller: level-based, keyed by namespace/name, never told what changed."""

    name: str

    def refs_for(self, event: str, obj: JsonDict) -> Iterable[Ref]:
        """Keys of this controller that a committed change concerns; pure and cheap (runs in the writer's thread)."""
        ...

    def expand(self, marker: str) -> Iterable[Ref]:
        """The keys a resync marker (a name starting with `*`) stands for."""
        ...

    def reconcile(self, namespace: str, name: str) -> float | None:
        """Bring the object's status where the real controller would; seconds until it must look again, or None."""
        ...


class Stopwatch:
    """When the current simulated activity of each object began, restarted when its token (uid, generation) changes."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._starts: dict[Ref, tuple[Hashable, float]] = {}

    def elapsed(self, ref: Ref, token: Hashable) -> float:
        started = self._starts.get(ref)
        if started is None or started[0] != token:
            started = self._starts[ref] = (token, self._clock())
        return self._clock() - started[1]

    def remaining(self, ref: Ref, token: Hashable, duration: float) -> float:
        """Seconds left of `duration` since the activity began; 0 when it is over."""
        return max(0.0, duration - self.elapsed(ref, token)) if duration > 0 else 0.0

    def forget(self, ref: Ref) -> None:
        self._starts.pop(ref, None)


class Simulation:
    """Subscribes to the cluster, queues keys, and reconciles them on one worker thread until stopped."""

    def __init__(self, cluster: ClusterApi, api: Api, cache: Cache, controllers: Sequence[Controller]) -> None:
        self._cluster = cluster
        self._api = api
        self._cache = cache
        self._controllers = {c.name: c for c in controllers}
        self.timers = Timers()
        self.queue = WorkQueue(self.timers)
        self._unsubscribe: Callable[[], None] | None = None
        self._worker = threading.Thread(target=self._work, name="devcluster-simulators", daemon=True)

    def start(self) -> None:
        kinds = [(kind.api_version, kind.kind) for kind in self._cache.kinds]
        self._unsubscribe = self._cluster.subscribe(self.on_event, kinds=kinds, inline=True, shared=True)
        for kind in self._cache.kinds:
            self._cache.fill(kind, self._api.fetch_all(kind))
        self.timers.start()
        self._worker.start()
        for name in self._controllers:
            self.queue.add(Key(name, "", EVERYTHING))

    def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.queue.close()
        self.timers.stop()
        if self._worker.is_alive() and threading.current_thread() is not self._worker:
            self._worker.join(STOP_WAIT)

    def on_event(self, event: str, obj: JsonDict) -> None:
        """The cluster's subscriber callback for the cached kinds (every controller is woken by changes of those
        only): updates the cache and queues keys, never calls the cluster, so the dev cluster may call it in the
        writer's thread as the change is committed, and a key is queued without waiting for another thread."""
        self._cache.observe(event, obj)
        for controller in self._controllers.values():
            for namespace, name in controller.refs_for(event, obj):
                self.queue.add(Key(controller.name, namespace, name))

    def _work(self) -> None:
        self._api.defer_on(threading.current_thread())
        try:
            while (key := self.queue.get()) is not None:
                try:
                    self._process(key)
                finally:
                    self.queue.done(key)
                if self.queue.waiting() == 0 or self._api.pending() >= DEFERRED_LIMIT:
                    self._api.flush()  # Events wait while keys do, as a recorder's broadcaster lags its controller
        finally:
            self._api.defer_on(None)
            self._api.flush()

    def _process(self, key: Key) -> None:
        controller = self._controllers[key.controller]
        try:
            if key.name.startswith(EVERYTHING):
                for namespace, name in controller.expand(key.name):
                    self.queue.add(Key(key.controller, namespace, name))
                after = None
            else:
                after = controller.reconcile(key.namespace, key.name)
        except Gone:
            self.queue.forget(key)
            return
        except Conflict:
            self.queue.retry(key)
            return
        except ApiFailure as e:
            log.info("simulator request failed; retrying", extra={"key": key, "error": str(e), "code": e.code})
            self.queue.retry(key)
            return
        except Exception:
            log.exception("simulator failed; retrying", extra={"key": key})
            self.queue.retry(key)
            return
        self.queue.forget(key)
        if after is not None:
            self.queue.add_after(key, after)
