"""Starting a plan (new uid, fresh record, lastRun and history) and refusing one (FATAL_ERROR, nothing applied)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from engine.model import Package
from engine.planner import secrets, view
from engine.planner.actions import Event, Settings
from engine.planner.status import PlanStatus, fresh_plan
from engine.planner.times import stamp
from engine.planner.triggers import Trigger

__all__ = ["plan_uid", "refuse", "start_plan"]

Json = dict[str, Any]
UID_NAMESPACE = uuid.UUID("6f1c1f3e-8a4e-4a57-9d2c-6b6b7a1d0c11")


def plan_uid(*parts: object) -> str:
    """A uid derived from what identifies one run of a plan, so equal inputs decide equally."""
    return str(uuid.uuid5(UID_NAMESPACE, json.dumps([str(p) for p in parts])))


def start_plan(
    pkg: Package, instance: Mapping[str, Any], status: Json, trigger: Trigger, now: datetime, settings: Settings,
    uid: str | None = None,
) -> tuple[Json, tuple[Event, ...]]:
    """`status` with `trigger.plan` started now: fresh record, activePlan, lastRun and, when new, a history entry."""
    last = dict(status.get("lastRun") or {})
    run = last_run(pkg, instance, trigger, last)
    uid = uid or plan_uid(view.uid(instance), trigger.plan, stamp(now), run)
    record = fresh_plan(pkg.plan(trigger.plan), uid, now)
    new = {**status, "plans": {**(status.get("plans") or {}), trigger.plan: record}, "lastRun": run,
           "activePlan": {"name": trigger.plan, "uid": uid, "status": PlanStatus.IN_PROGRESS.value}}
    if (run["operatorVersion"], run["parameters"]) != (last.get("operatorVersion"), last.get("parameters")):
        new["history"] = history(status, pkg, run, trigger, now, settings)
    return new, started_events(run["operatorVersion"], trigger)


def last_run(pkg: Package, instance: Mapping[str, Any], trigger: Trigger, last: Mapping[str, Any]) -> Json:
    run: Json = {
        "plan": trigger.plan,
        "operatorVersion": view.version_name(instance, pkg.version_name),
        "parameters": secrets.fingerprint(pkg, trigger.values, view.uid(instance)),
    }
    execution = trigger.execution_uid or last.get("planExecutionUID")
    if execution:
        run["planExecutionUID"] = execution
    if trigger.dropped:
        run["removedParameters"] = list(trigger.dropped)
    return run


def history(status: Mapping[str, Any], pkg: Package, run: Json, trigger: Trigger, now: datetime,
            settings: Settings) -> list[Json]:
    entry = {"operatorVersion": run["operatorVersion"], "parameters": secrets.public(pkg, trigger.values),
             "at": stamp(now)}
    return [*(status.get("history") or []), entry][-settings.history_limit:]


def started_events(version: str, trigger: Trigger) -> tuple[Event, ...]:
    events = [Event("PlanStarted", f"plan {trigger.plan} started ({trigger.reason}) with {version}")]
    if trigger.removed:
        names = ", ".join(trigger.removed)
        events.append(Event("ParametersRemoved", f"{version} no longer has these parameters: {names}", "Warning"))
    return tuple(events)


def refuse(pkg: Package, status: Json, trigger: Trigger, now: datetime, uid: str) -> Json:
    """`status` with `trigger.plan` FATAL_ERROR for `trigger.error`, and nothing else started."""
    plans = dict(status.get("plans") or {})
    record = plans.get(trigger.plan) or fresh_plan(pkg.plan(trigger.plan), uid, now)
    plans[trigger.plan] = {**record, "status": PlanStatus.FATAL_ERROR.value, "message": trigger.error}
    active = {"name": trigger.plan, "uid": plans[trigger.plan]["uid"], "status": PlanStatus.FATAL_ERROR.value}
    return {**status, "plans": plans, "activePlan": active}
