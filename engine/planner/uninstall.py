"""Uninstall: the cleanup plan (once per deletion), then deleting every inventory object, then the finalizer."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from engine.model import Package
from engine.planner import inventory, view
from engine.planner.actions import UNINSTALL_STEP, Delete, Event, RemoveFinalizer, Settings
from engine.planner.refs import Ref
from engine.planner.running import Outcome, run_active
from engine.planner.start import plan_uid, start_plan
from engine.planner.status import TERMINAL
from engine.planner.triggers import Trigger

__all__ = ["uninstall"]

Json = dict[str, Any]
CLEANUP = "cleanup"


def uninstall(pkg: Package, instance: Mapping[str, Any], observed: Mapping[Ref, Mapping[str, Any]], now: datetime,
              settings: Settings, status: Json, values: Mapping[str, Any]) -> Outcome:
    """One decision of an Instance being deleted; nothing to do once the finalizer is gone."""
    if not view.has_finalizer(instance):
        return Outcome(status)
    outcome = Outcome(status)
    if CLEANUP in pkg.plans:
        outcome = cleanup(pkg, instance, observed, now, settings, status, values)
        record = (outcome.status.get("plans") or {}).get(CLEANUP) or {}
        if record.get("status") not in TERMINAL:
            return outcome
    return remove_all(outcome, observed, view.namespace(instance), view.name(instance))


def cleanup(pkg: Package, instance: Mapping[str, Any], observed: Mapping[Ref, Mapping[str, Any]], now: datetime,
            settings: Settings, status: Json, values: Mapping[str, Any]) -> Outcome:
    """Run the cleanup plan, started once for this deletion (its uid derives from the deletion timestamp)."""
    uid = plan_uid(view.uid(instance), CLEANUP, view.metadata(instance).get("deletionTimestamp"))
    events: tuple[Event, ...] = ()
    if ((status.get("plans") or {}).get(CLEANUP) or {}).get("uid") != uid:
        status, events = start_plan(pkg, instance, status, Trigger(CLEANUP, "uninstall", values), now, settings, uid)
    if ((status.get("plans") or {}).get(CLEANUP) or {}).get("status") in TERMINAL:
        return Outcome(status, events=events)  # done: no healing of what is about to be deleted
    outcome = run_active(pkg, instance, observed, now, settings, status, values, prune=False)
    return outcome.then(events=events)


def remove_all(outcome: Outcome, observed: Mapping[Ref, Mapping[str, Any]], namespace: str, name: str) -> Outcome:
    """Delete every inventory object still there (but those another Instance adopted); release the Instance
    once none is left."""
    items = inventory.without_gone(inventory.entries(outcome.status), (), observed)
    items = inventory.without_foreign(items, observed, namespace, name)
    present = tuple(Ref.of_entry(e) for e in items)
    status = {**outcome.status, "appliedResources": items}
    if present:
        return outcome.then(status, (Delete(UNINSTALL_STEP, present),))
    return outcome.then(status, (RemoveFinalizer(),))
