"""Driving an Instance from this process (`kplan run`): the manager's Runner and Caches, woken by watch events.

The loop reconciles, then waits until a watch event concerns a driven Instance or a timer the planner
asked for (backoff, step timeouts) is due. Child Instances created by Operator tasks are driven too:
they are annotated `kplan.dev/runner: cli` when first seen, so a manager leaves them alone as well.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Mapping
from typing import Any

from engine import render
from engine.cli.cluster import INSTANCE, OPERATOR_VERSION
from engine.cli.following import Target, outcome
from engine.errors import KplanError, PermanentError, Timeout, TransientError
from engine.kube import Caches, Kube, NotFound
from engine.kube.recorder import FLUSH_WAIT
from engine.runner import CLI, DRIVER_ANNOTATION, RunEvent, Runner
from engine.runner.acting import INSTANCE_NAMESPACE

__all__ = ["Driver"]

log = logging.getLogger(__name__)

GROUP = "kplan.dev/"
Kind = tuple[str, str]  # (apiVersion, kind)
# What every pass reads besides the plan's objects: the Instance's OperatorVersion and the Secret of its generated
# values; the pods of a Job, for why it does not run.
READ_EVERY_PASS: frozenset[Kind] = frozenset({OPERATOR_VERSION, ("v1", "Secret")})
JOB, POD = ("batch/v1", "Job"), ("v1", "Pod")
RETRY_START, RETRY_MAX = 0.5, 10.0  # seconds between passes while the API server fails
Json = dict[str, Any]


class Driver:
    """Runs the plans of one Instance (and its children) until a target run ends."""

    def __init__(self, kube: Kube, namespace: str, name: str, emit: Callable[[RunEvent], None],
                 kinds: Collection[Kind] = ()) -> None:
        """`kinds`: (apiVersion, kind) of the objects the plans apply, cached at once with those every pass reads
        (see `warm`)."""
        self._kube, self.namespace, self.name = kube, namespace, name
        self._kinds = frozenset(kinds)
        # one Instance's namespace, not the cluster's; each kind filled by one watch, not a list and a watch
        self._caches = Caches(kube, per_namespace=True, watch_lists=True)
        self._runner = Runner(kube, self._caches, emit=emit, driver=CLI)
        self._driven = frozenset({key(namespace, name)})  # replaced, never changed: handlers read it from other threads
        self._wake = threading.Event()
        self._caches.add_reader(self._changed)
        self._warming: threading.Thread | None = None
        self._warm_error: BaseException | None = None
        self.latest: Json | None = None  # the Instance as the last pass left it

    def drive(self, target: Target, timeout: float) -> tuple[Json, str]:
        """Reconcile until the target run ended: (the Instance, COMPLETE or FATAL_ERROR); Timeout after `timeout`."""
        found: list[str] = []

        def ended(instance: Json | None) -> bool:
            if instance is None:
                raise PermanentError(f"instance {self.name!r} was deleted while its plan ran")
            state = outcome(instance, target)
            found.extend([state] if state else [])
            return state is not None

        instance = self.drive_until(ended, timeout, f"the plan of instance {self.name!r} did not end")
        assert instance is not None
        return instance, found[-1]

    def drive_until(self, done: Callable[[Json | None], bool], timeout: float, what: str) -> Json | None:
        """Reconcile until `done(instance)` holds (None: the Instance is gone); Timeout naming `what` if not."""
        clock = self._kube.clock
        deadline = clock.monotonic() + timeout
        retry = RETRY_START
        try:
            self._warmed()
            while True:
                self._wake.clear()
                try:
                    delay = self._pass()
                    retry = RETRY_START
                except TransientError as err:
                    log.warning("pass failed, retrying: %s", err)
                    delay, retry = retry, min(retry * 2, RETRY_MAX)
                instance = self.latest = self._caches.get(*INSTANCE, self.name, self.namespace)
                if done(instance):
                    return instance
                remaining = deadline - clock.monotonic()
                if remaining <= 0:
                    raise Timeout(f"{what} within {timeout:g}s")
                clock.wait(self._wake, min(delay, remaining) if delay is not None else remaining)
        finally:
            if not self._runner.flush_events(FLUSH_WAIT):
                log.warning("events not all written", extra={"waited_seconds": FLUSH_WAIT})
            self._caches.stop()

    def start_warming(self) -> None:
        """Start `warm` on a thread of its own, so the caches fill while the caller records the Instance (their lists
        and watches off the critical path); `drive` waits for it. The caller stops the Driver (`stop`) if it does
        not go on to drive."""
        def warm() -> None:
            try:
                self.warm()
            except BaseException as err:  # the Instances' cache did not start: drive raises it
                self._warm_error = err

        self._warming = threading.Thread(target=warm, name="warm", daemon=True)
        self._warming.start()

    def stop(self) -> None:
        """Stop the caches (after `start_warming` without a `drive`)."""
        if self._warming is not None:
            self._warming.join()
        self._caches.stop()

    def _warmed(self) -> None:
        if self._warming is None:
            self.warm()
            return
        self._warming.join()
        if self._warm_error is not None:
            raise self._warm_error

    def warm(self) -> None:
        """Start the caches of the kinds a pass reads all at once: otherwise the first pass starts them one by one
        as it comes to them, each a list and a watch on the critical path (8 round trips in a row for a plan of
        six kinds). The Instances' cache must start (its errors are the caller's); for any other kind a failure
        is left to the pass, which meets the same answer where it reads the kind (one not served yet, say)."""
        kinds = (self._kinds | READ_EVERY_PASS | ({POD} if JOB in self._kinds else set())) - {INSTANCE}

        def ensure(kind: Kind) -> None:
            try:
                self._caches.ensure(*kind, namespace=self.namespace)
            except KplanError as err:
                log.debug("cache of %s not started ahead: %s", kind[1], err)

        threads = [threading.Thread(target=ensure, args=(kind,), name=f"warm-{kind[1]}", daemon=True)
                   for kind in sorted(kinds)]
        for thread in threads:
            thread.start()
        self._caches.ensure(*INSTANCE, namespace=self.namespace)
        for thread in threads:
            thread.join()

    def _pass(self) -> float | None:
        """One reconcile of every driven Instance; the earliest timer any of them asked for."""
        delays = []
        for driven in sorted(self._driven):
            namespace, _, name = driven.partition("/")
            delays.append(self._runner.reconcile(namespace, name))
        self._adopt_children()
        due = [d for d in delays if d is not None]
        return min(due) if due else None

    def _adopt_children(self) -> None:
        """Drive the child Instances of driven ones; annotate those no one claimed yet."""
        for child in self._caches.list(*INSTANCE, self.namespace):
            meta = child.get("metadata") or {}
            child_key = key(self.namespace, str(meta.get("name")))
            if child_key in self._driven or not (owners_of(child) & self._driven):
                continue
            if DRIVER_ANNOTATION not in (meta.get("annotations") or {}):
                patch = {"metadata": {"annotations": {DRIVER_ANNOTATION: CLI}}}
                try:
                    self._kube.patch(*INSTANCE, str(meta.get("name")), self.namespace, patch)
                except NotFound:  # deleted meanwhile: nothing to drive
                    continue
            if (meta.get("annotations") or {}).get(DRIVER_ANNOTATION, CLI) == CLI:
                self._driven = self._driven | {child_key}
                self._wake.set()

    def _changed(self, _change: str, obj: dict[str, Any], _listed: bool) -> None:
        """A cache reader (on an informer's thread; `obj` is the cached object itself, only read): wake the loop for
        a change that concerns a driven Instance. A reader, not a handler: a handler gets a deep copy of every
        object each cache lists or is told of, cluster-wide, and this reads three fields of it."""
        if concerned(obj) & self._driven or is_kplan(obj, "OperatorVersion"):
            self._wake.set()


def key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def is_kplan(obj: Mapping[str, Any], kind: str) -> bool:
    return obj.get("kind") == kind and str(obj.get("apiVersion") or "").startswith(GROUP)


def owners_of(obj: Mapping[str, Any]) -> set[str]:
    """Keys of the Instances that own `obj`."""
    meta = obj.get("metadata") or {}
    namespace = str(meta.get("namespace") or "")
    return {key(namespace, str(o.get("name"))) for o in meta.get("ownerReferences") or []
            if o.get("kind") == "Instance" and str(o.get("apiVersion") or "").startswith(GROUP)}


def concerned(obj: Mapping[str, Any]) -> set[str]:
    """Keys of the Instances a change of `obj` concerns: itself, its owners, the Instance its labels name."""
    meta = obj.get("metadata") or {}
    namespace = str((meta.get("annotations") or {}).get(INSTANCE_NAMESPACE) or meta.get("namespace") or "")
    found = owners_of(obj)
    if is_kplan(obj, "Instance"):
        found.add(key(str(meta.get("namespace") or ""), str(meta.get("name"))))
    labelled = (meta.get("labels") or {}).get(render.LABEL_INSTANCE)
    if labelled:
        found.add(key(namespace, str(labelled)))
    return found
