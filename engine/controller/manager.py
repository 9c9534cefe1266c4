"""Manager: watches Instances, OperatorVersions and what kplan applied; the lease holder's workers reconcile them."""

from __future__ import annotations

import logging
import socket
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from engine.controller.keys import InstanceKeys, key
from engine.controller.metrics import Metrics
from engine.controller.probes import ProbeServer
from engine.controller.queue import Lane, WorkQueue
from engine.controller.sharding import Shard
from engine.controller.urgency import start_order
from engine.controller.workers import Workers
from engine.errors import KplanError, PermanentError
from engine.kube import Caches, Clock, Fence, Kube, LeaderElector
from engine.kube.recorder import FLUSH_WAIT
from engine.planner import Settings
from engine.runner import INSTANCE, OPERATOR_VERSION, PlanFinished, RunEvent, Runner

__all__ = ["Manager", "ManagerSettings", "default_identity"]

log = logging.getLogger(__name__)

SYNC_BACKOFF_START, SYNC_BACKOFF_MAX = 0.5, 15.0  # seconds between attempts to list kplan's kinds


def default_identity() -> str:
    """`<hostname>_<random>`: unique per process, readable in the Lease."""
    return f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class ManagerSettings:
    workers: int = 2
    metrics_address: tuple[str, int] | None = ("127.0.0.1", 8080)  # None: no HTTP endpoints
    leader_elect: bool = True
    lease_name: str = "kplan-manager"
    lease_namespace: str | None = None  # None: the Kube's namespace
    identity: str = field(default_factory=default_identity)
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    error_backoff_base: float = 0.5  # seconds before the first retry of a failed pass, doubling per failure
    error_backoff_max: float = 300.0
    planner: Settings = field(default_factory=Settings)
    watch_namespace: str | None = None  # reconcile only the Instances of this namespace (None: all)
    shard: Shard = field(default_factory=Shard)  # reconcile only this share of the Instances (default: all)


class Manager:
    """Caches and probes run from `start()` to `stop()`; workers run only while leading (or without election)."""

    def __init__(self, kube: Kube, settings: ManagerSettings | None = None, *, clock: Clock | None = None) -> None:
        self.settings = settings or ManagerSettings()
        self._kube = kube
        self._clock: Clock = clock or kube.clock
        # The selector is declared, not only ensured: handlers of other kinds may read Instances first.
        selector = self.settings.shard.selector
        self.caches = Caches(kube, selectors={INSTANCE: selector} if selector else None)
        self.queue = WorkQueue(clock=self._clock, backoff_base=self.settings.error_backoff_base,
                               backoff_max=self.settings.error_backoff_max)
        # With election, every request of a pass keeps to the Lease: a lost Lease stops the pass in progress.
        self.fence = Fence(kube.clock) if self.settings.leader_elect else None
        acting = kube.fenced(self.fence) if self.fence is not None else kube
        self.runner = Runner(acting, self.caches, settings=self.settings.planner, clock=self._clock, emit=self._on_run)
        self.metrics = Metrics(requests=lambda: kube.requests, depth=lambda: self.queue.depth,
                               leading=lambda: self.leading)
        self._keys = InstanceKeys(lambda namespace: self.caches.list(*INSTANCE, namespace),
                                  lambda api_version, kind, namespace, name: self.caches.shared(api_version, kind, name,
                                                                                                namespace))
        self._stopping = threading.Event()  # the whole manager
        self._campaign_stop = threading.Event()  # the elector, stopped only after the workers
        self._synced = threading.Event()
        self._lock = threading.Lock()
        self._workers: Workers | None = None
        self._elector: LeaderElector | None = None
        self._elector_thread: threading.Thread | None = None
        self._server: ProbeServer | None = None
        if self.settings.metrics_address is not None:
            self._server = ProbeServer(self.settings.metrics_address, healthy=self.healthy, ready=self.ready,
                                       metrics=self.metrics.exposition)

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def address(self) -> tuple[str, int] | None:
        """Where /healthz, /readyz and /metrics are served (the bound port), or None."""
        return self._server.address if self._server else None

    def start(self) -> None:
        """Serve probes, fill the caches (waiting for kplan's CRDs if needed), then lead or campaign."""
        if self._server is not None:
            self._server.start()
        self.caches.add_reader(self._on_change)
        if not self._sync_caches():
            return
        if not self.settings.leader_elect:
            self._start_leading()
            return
        self._elector = LeaderElector(
            self._kube, self.lease_name, self.settings.lease_namespace or self._kube.namespace,
            self.settings.identity, lease_duration=self.settings.lease_duration,
            renew_deadline=self.settings.renew_deadline, retry_period=self.settings.retry_period, fence=self.fence,
        )
        self._elector_thread = threading.Thread(
            target=self._elector.run, args=(self._start_leading, self._stop_leading, self._campaign_stop),
            name="leader-election", daemon=True,
        )
        self._elector_thread.start()

    def run(self, stop: threading.Event) -> None:
        """`start()`, then block until `stop` is set, then `stop()`."""
        def relay() -> None:
            stop.wait()
            self._stopping.set()

        threading.Thread(target=relay, name="stop-relay", daemon=True).start()
        try:
            self.start()
            stop.wait()
        finally:
            self.stop()

    def stop(self) -> None:
        """Finish the passes in flight, hand the lease back, stop caches and probes."""
        self._stopping.set()
        self._stop_leading()
        if not self.runner.flush_events(FLUSH_WAIT):  # while the Lease is still this manager's
            log.warning("events not all written before stopping", extra={"waited_seconds": FLUSH_WAIT})
        self.queue.shutdown()
        self._campaign_stop.set()
        if self._elector_thread is not None:
            self._elector_thread.join()
        self.caches.stop()
        if self._server is not None:
            self._server.stop()
        log.info("manager stopped", extra={"identity": self.settings.identity})

    # --- probes ----------------------------------------------------------------------------

    @property
    def lease_name(self) -> str:
        """The Lease this manager campaigns for: its shard's own."""
        return self.settings.shard.lease_name(self.settings.lease_name)

    def owns(self, namespace: str, name: str) -> bool:
        """Whether Instance `namespace/name` is this manager's: in its namespace, its shard and its Instance cache
        (which holds only the Instances the shard's selector matches)."""
        only, shard = self.settings.watch_namespace, self.settings.shard
        if (only is not None and namespace != only) or not shard.owns(namespace, name):
            return False
        return not shard.selector or self.caches.shared(*INSTANCE, name, namespace) is not None

    def _reconcile(self, namespace: str, name: str) -> float | None:
        """A pass of the runner over an Instance that is still this manager's (labels may have moved it)."""
        return self.runner.reconcile(namespace, name) if self.owns(namespace, name) else None

    @property
    def leading(self) -> bool:
        with self._lock:
            return self._workers is not None

    def healthy(self) -> bool:
        """Alive: not stopping, and when leading, every worker thread still runs."""
        with self._lock:
            workers = self._workers
        return not self._stopping.is_set() and (workers is None or workers.alive)

    def ready(self) -> bool:
        """Ready: caches synced, and leading or campaigning."""
        campaigning = self._elector_thread is not None and self._elector_thread.is_alive()
        return self._synced.is_set() and not self._stopping.is_set() and (self.leading or campaigning)

    # --- leadership ------------------------------------------------------------------------

    def _start_leading(self) -> None:
        with self._lock:
            if self._workers is not None or self._stopping.is_set():
                return
            self._queue_every_instance()
            self._workers = Workers(self.queue, self._reconcile, self._on_pass, self.settings.workers)
            self._workers.start()
        log.info("leading", extra={"identity": self.settings.identity, "workers": self.settings.workers})

    def _queue_every_instance(self) -> None:
        """Queue every Instance (the events seen while standing by may be stale), those with work under way first:
        with many Instances, a pass over each settled one would hold back every plan in progress."""
        first, later = start_order(self.caches.list(*INSTANCE, self.settings.watch_namespace))
        for instances, lane in ((first, Lane.FIRST), (later, Lane.LATER)):
            for instance in instances:
                meta = instance.get("metadata") or {}
                namespace, name = str(meta.get("namespace")), str(meta.get("name"))
                if self.owns(namespace, name):
                    self.queue.add(key(namespace, name), lane)

    def _stop_leading(self) -> None:
        with self._lock:
            workers, self._workers = self._workers, None
        if workers is not None:
            log.info("stopped leading", extra={"identity": self.settings.identity})
            workers.stop(wait=self._stopping.is_set())  # on a lost lease, do not block the elector

    # --- wiring ----------------------------------------------------------------------------

    def _sync_caches(self) -> bool:
        """List Instances and OperatorVersions; retried with backoff while the CRDs are missing. False: stopped."""
        delay = SYNC_BACKOFF_START
        while not self._stopping.is_set():
            try:
                self.caches.ensure(*OPERATOR_VERSION)
                self.caches.ensure(*INSTANCE, label_selector=self.settings.shard.selector)
            except KplanError as err:
                # The CRDs hint only where they are what is missing, not when the server does not answer.
                hint = {"hint": "kplan init installs the CRDs"} if isinstance(err, PermanentError) else {}
                log.warning("cannot list kplan objects yet", extra={"error": str(err), "retry_in": delay, **hint})
                self._clock.wait(self._stopping, delay)
                delay = min(delay * 2, SYNC_BACKOFF_MAX)
                continue
            self._synced.set()
            return True
        return False

    def _on_change(self, change: str, obj: dict[str, Any], listed: bool) -> None:
        """Queue the Instances a change concerns; what a listing found waits behind watch events (at start every
        object of a kind is listed: the Instances with work under way are queued first by `_start_leading`). An event
        that only echoes what a settled pass of an Instance wrote queues no pass of that Instance (others' still)."""
        lane = Lane.LATER if listed else Lane.NORMAL
        keys = self._keys(obj)
        echoed = self.runner.echo(change, obj)
        if echoed is not None:
            keys.discard(echoed)
        for found in keys:
            namespace, _, name = found.partition("/")
            if self.owns(namespace, name):
                self.queue.add(found, lane)

    def _on_pass(self, failed: bool) -> None:
        self.metrics.reconciled(failed=failed)

    def _on_run(self, event: RunEvent) -> None:
        log.info(type(event).__name__, extra=event_fields(event))
        if isinstance(event, PlanFinished) and event.duration is not None:
            self.metrics.plan_finished(event.plan, event.status, event.duration)


def event_fields(event: RunEvent) -> dict[str, Any]:
    """A run event's fields as log extras (`message` is taken by the log record itself: `detail`)."""
    found = {("detail" if k == "message" else k): v for k, v in vars(event).items()}
    return {k: v for k, v in found.items() if v not in (None, "")}
