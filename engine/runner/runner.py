"""Runner: one level-based reconcile of one Instance — observe, decide (the planner), act, record.

Shared by the manager (many Instances, driven by watch events) and `kplan run` (one Instance, in the
foreground). Nothing is kept between passes that a restart would lose: what the runner remembers (parsed
packages, its own recent writes) only saves work or hides the lag of the watch caches.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from engine.errors import KplanError, PackageInvalid
from engine.kube import Caches, Clock, Conflict, Kube, NotFound
from engine.kube.recorder import EventRecorder
from engine.model import Package
from engine.planner import (
    Action,
    Apply,
    Decision,
    Delete,
    Event,
    GenerateParameters,
    Ref,
    Settings,
    decide,
    record_failures,
)
from engine.planner.follow import ends_run, may_advance
from engine.runner.acting import Acting, instance_key
from engine.runner.echoes import Echoes
from engine.runner.events import RunEvent, changes
from engine.runner.observed import ObservedView, RecentWrites
from engine.runner.orphans import orphan_actions, stranded
from engine.runner.packages import PackageCache

__all__ = ["CLI", "DRIVER_ANNOTATION", "INSTANCE", "MANAGER", "OPERATOR_VERSION", "Runner"]

log = logging.getLogger(__name__)

INSTANCE = ("kplan.dev/v1alpha1", "Instance")
OPERATOR_VERSION = ("kplan.dev/v1alpha1", "OperatorVersion")
DRIVER_ANNOTATION = "kplan.dev/runner"  # who drives the Instance: "cli" (`kplan run`), else the manager
MANAGER, CLI = "manager", "cli"
ATTEMPTS = 5  # passes when the Instance keeps changing under us (status write conflicts)
# Decisions after the first within one pass: what was just applied may already be healthy (a ConfigMap is once
# applied), so the steps after it start in the same pass and one status write records them all.
FOLLOW_UPS = 4

DEFAULT_SETTINGS = Settings()

Json = dict[str, Any]
Emit = Callable[[RunEvent], None]


class Runner:
    """Reconciles Instances driven by `driver` (MANAGER or CLI); others are left alone."""

    def __init__(
        self,
        kube: Kube,
        caches: Caches,
        *,
        settings: Settings = DEFAULT_SETTINGS,
        clock: Clock | None = None,
        emit: Emit | None = None,
        driver: str = MANAGER,
    ) -> None:
        self._kube, self._caches, self._settings = kube, caches, settings
        self._clock: Clock = clock or kube.clock
        self._emit = emit or (lambda _event: None)
        self.driver = driver
        self._recent = RecentWrites()
        self._packages = PackageCache()
        self._echoes = Echoes()
        self._acting = Acting(kube, self._recent, self._echoes)
        self._events = EventRecorder(kube, self._event_failed)
        caches.add_reader(lambda change, obj, _listed: self._recent.observe(change, obj))

    def reconcile(self, namespace: str, name: str) -> float | None:
        """One pass over Instance `namespace/name`; seconds until a timer (backoff, timeout) is due, or None.

        Transient failures of single actions are recorded in the status; anything that prevents the pass
        itself (the API unavailable, the Instance changing faster than it can be written) raises.
        """
        key = f"{namespace}/{name}"
        try:
            after, settled = self._attempts(namespace, name)
        except BaseException:
            self._echoes.settled(key, False)
            raise
        if self._echoes.settled(key, settled):
            return 0.0  # the pass did not settle, and an event taken for the echo of its writes meanwhile is owed one
        return after

    def _attempts(self, namespace: str, name: str) -> tuple[float | None, bool]:
        """A pass, tried again while the Instance changes under it: when due again, and whether it settled."""
        instance = self._cached_instance(namespace, name)
        for _ in range(ATTEMPTS):
            if instance is None or not self.serves(instance):
                return None, False
            try:
                return self._pass(instance)
            except Conflict:
                log.info("instance changed, deciding again", extra={"instance": f"{namespace}/{name}"})
                instance = self._fresh_instance(namespace, name)
            except NotFound:
                if self._fresh_instance(namespace, name) is None:
                    return None, False  # deleted meanwhile: nothing left to do
                raise
        raise Conflict(f"cannot reconcile Instance {namespace}/{name}: it kept changing")

    def echo(self, change: str, obj: Mapping[str, Any]) -> str | None:
        """The Instance (`namespace/name`) to which a watch event of `obj` shows only what a settled pass of it wrote
        (it needs no pass for it), or None."""
        return self._echoes.heard(change, obj)

    def flush_events(self, timeout: float) -> bool:
        """Wait until the Events recorded so far are written (see EventRecorder); False after `timeout` seconds."""
        return self._events.flush(timeout)

    def serves(self, instance: Mapping[str, Any]) -> bool:
        annotations = (instance.get("metadata") or {}).get("annotations") or {}
        return (annotations.get(DRIVER_ANNOTATION) or MANAGER) == self.driver

    # --- one pass --------------------------------------------------------------------------

    def _pass(self, instance: Json, *, again: bool = True) -> tuple[float | None, bool]:
        """One decision carried out and recorded: when due again, and whether the pass settled (deciding again with
        what it wrote in view would start nothing)."""
        packages = self._packages_of(instance)
        if packages is None:
            if stranded(instance):
                self._release_orphan(instance)
            return None, False
        pkg, previous = packages
        now = self._clock.now()
        observed = ObservedView(self._caches, self._recent)
        decision = decide(pkg, instance, observed, now, self._settings, previous)
        before = instance
        instance = self._acting.before(decision.actions, instance)
        decision, statuses, failed, settled = self._carry_out(pkg, previous, instance, decision, now)
        old_status = before.get("status") or {}
        if decision.status != old_status:
            instance = self._acting.write_status(instance, decision.status)
        instance = self._acting.after(decision.actions, instance)
        self._record(decision, instance, ObservedView(self._caches, self._recent))
        for prior, status in zip([old_status, *statuses], statuses, strict=False):
            for event in changes(namespace_of(instance), name_of(instance), prior, status):
                self._emit(event)
        if again and not failed and any(isinstance(a, GenerateParameters) for a in decision.actions):
            return self._pass(instance, again=False)  # the values are stored (and remembered): plan with them now
        return decision.requeue_after, settled

    def _carry_out(self, pkg: Package, previous: Package | None, instance: Json, decision: Decision,
                   now: datetime) -> tuple[Decision, list[Json], bool, bool]:
        """Apply and delete what `decision` asks; then, while that started something, decide again with it in view.

        Returns the decisions merged into one (their actions, the last status, all Events), the status after
        each, in order, whether an action of the first decision failed, and whether the pass settled: deciding
        again with what it carried out in view is known to start nothing new (else the next pass must).
        """
        failures = self._acting.objects(decision.actions, namespace_of(instance), instance_key(instance))
        failed = bool(failures)
        decision = record_failures(decision, failures, now, self._settings)
        statuses = [decision.status]
        latest, packages = decision.actions, (pkg, *((previous,) if previous else ()))
        settled = False
        for _ in range(FOLLOW_UPS):
            if failures or not touched(decision.actions):
                # nothing carried out: settled only if nothing was recorded either, for a decision that records a
                # transition (a plan or step started) may start something once it is in view — unless all it
                # recorded is the end of the run in progress (each Instance's last pass would be followed by one
                # more over its own status write)
                settled = not failures and (decision.status == (instance.get("status") or {})
                                            or ends_run(instance, decision))
                break
            observed = ObservedView(self._caches, self._recent)  # a view reads each object once: read again
            if not may_advance(packages, latest, observed):
                # each step just started waits on an object not healthy yet: nothing new to start, but not settled
                # (the next pass writes what the step waits on, or judges a failed object)
                break
            follow = decide(pkg, {**instance, "status": decision.status}, observed, now, self._settings, previous)
            if not touched(follow.actions) or touched(follow.actions) & touched(decision.actions):
                settled = not touched(follow.actions) and follow.status == decision.status  # else the next pass's
                break  # nothing new started (or the same objects again: that is the next pass's to judge)
            failures = self._acting.objects(follow.actions, namespace_of(instance), instance_key(instance))
            latest = follow.actions
            follow = record_failures(follow, failures, now, self._settings)
            decision = Decision(decision.actions + follow.actions, follow.status, decision.events + follow.events,
                                follow.requeue_after)
            statuses.append(decision.status)
        return decision, statuses, failed, settled

    def _release_orphan(self, instance: Json) -> None:
        """Remove what a deleted Instance without a package applied, then its finalizer (no cleanup plan)."""
        actions = orphan_actions(instance, ObservedView(self._caches, self._recent))
        failures = self._acting.objects(actions, namespace_of(instance))
        if failures:
            raise failures[0].error
        self._acting.after(actions, instance)

    def _packages_of(self, instance: Json) -> tuple[Package, Package | None] | None:
        """The Instance's package and, while it still runs a plan of another version, that version's."""
        wanted = str(((instance.get("spec") or {}).get("operatorVersion") or {}).get("name") or "")
        pkg = self._package(instance, wanted, report=True)
        if pkg is None:
            return None
        ran = str((((instance.get("status") or {}).get("lastRun")) or {}).get("operatorVersion") or "")
        previous = self._package(instance, ran, report=False) if ran and ran != wanted else None
        return pkg, previous

    def _package(self, instance: Json, version: str, *, report: bool) -> Package | None:
        found = self._operator_version(namespace_of(instance), version) if version else None
        if found is None:
            if report:
                self._warn(instance, "OperatorVersionNotFound", f"OperatorVersion {version!r} not found")
            return None
        try:
            return self._packages.package(found)
        except PackageInvalid as err:
            if report:
                self._warn(instance, "PackageInvalid", f"OperatorVersion {version}: {err}")
            return None

    def _operator_version(self, namespace: str, name: str) -> Json | None:
        """From the cache (the cached object itself: a pass only reads it, and a copy of a long package's files cost
        every pass a deep copy); a miss asks the server (the OperatorVersion may be newer than the cache)."""
        cached = self._caches.shared(*OPERATOR_VERSION, name, namespace)
        return cached if cached is not None else self._kube.get(*OPERATOR_VERSION, name, namespace)

    # --- reading the Instance --------------------------------------------------------------

    def _cached_instance(self, namespace: str, name: str) -> Json | None:
        """From the cache, the cached object itself (a pass never changes the Instance it read: it writes new ones, and
        a copy of a long plan's status cost every pass a deep copy on the way to its first request); a miss asks the
        server (a new Instance may not be in the cache yet)."""
        ref = Ref(*INSTANCE, namespace, name)
        found = self._recent.resolve(ref, self._caches.shared(*INSTANCE, name, namespace))
        return found if found is not None else self._fresh_instance(namespace, name)

    def _fresh_instance(self, namespace: str, name: str) -> Json | None:
        """The Instance as the server has it now (the cache may lag behind the write that conflicted)."""
        found = self._kube.get(*INSTANCE, name, namespace)
        if found is None:
            self._recent.forget(Ref(*INSTANCE, namespace, name))
            return None
        self._recent.remember(found)
        return found

    def _namespace_terminating(self, instance: Mapping[str, Any]) -> bool:
        try:
            found = self._kube.get("v1", "Namespace", namespace_of(instance))
        except KplanError:  # not allowed to read it, or the server fails: warn as usual
            return False
        return found is None or bool((found.get("metadata") or {}).get("deletionTimestamp"))

    # --- Events ----------------------------------------------------------------------------

    def _record(self, decision: Decision, instance: Json, observed: ObservedView) -> None:
        """Queue the decision's Events: written off the pass's path (an Event is worth a log line, not a failed
        pass)."""
        for event in decision.events:
            involved = instance if event.ref is None else involved_object(event, observed)
            self._events.record(involved, event.reason, event.message, type=event.type, about=instance)

    def _warn(self, instance: Json, reason: str, message: str) -> None:
        if stranded(instance) or self._namespace_terminating(instance):
            # Routine while a namespace is deleted: its OperatorVersions may go before its Instances, which are
            # then released without their package; and no Event can be written there any more.
            log.debug("instance not reconciled", extra={"instance": instance_key(instance), "reason": reason})
            return
        log.warning("instance not reconciled", extra={"instance": instance_key(instance), "reason": reason,
                                                       "detail": message})
        self._events.record(instance, reason, message, type="Warning")

    def _event_failed(self, instance: Mapping[str, Any], reason: str, err: KplanError) -> None:
        """A log line for an Event not written; a debug one when the namespace is being deleted (routine)."""
        routine = self._namespace_terminating(instance)
        (log.debug if routine else log.warning)("event not recorded", extra={"reason": reason, "error": str(err)})


def touched(actions: Iterable[Action]) -> set[Ref]:
    """The objects that `actions` apply or delete."""
    refs = {Ref.of(obj) for a in actions if isinstance(a, Apply) for obj in a.objects}
    return refs | {ref for a in actions if isinstance(a, Delete) for ref in a.refs}


def involved_object(event: Event, observed: ObservedView) -> Json:
    """The object an Event is about: as observed (with its uid), else as named by its Ref."""
    assert event.ref is not None
    found = observed.get(event.ref)
    if found is not None:
        return found
    ref = event.ref
    metadata = {"name": ref.name, **({"namespace": ref.namespace} if ref.namespace else {})}
    return {"apiVersion": ref.api_version, "kind": ref.kind, "metadata": metadata}


def namespace_of(instance: Mapping[str, Any]) -> str:
    return str((instance.get("metadata") or {}).get("namespace") or "")


def name_of(instance: Mapping[str, Any]) -> str:
    return str((instance.get("metadata") or {}).get("name") or "")
