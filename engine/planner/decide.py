"""The planner's entry point: (package, Instance, observed objects, now) -> Decision, a pure function."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from engine.model import Package
from engine.planner import generated, secrets, triggers, view
from engine.planner.actions import (
    DEFAULT_SETTINGS,
    Action,
    AddFinalizer,
    ClearPlanExecution,
    Decision,
    Event,
    GenerateParameters,
    Settings,
)
from engine.planner.finish import backoff_deadline, scrubbed, settle, transition_events
from engine.planner.refs import Ref
from engine.planner.running import Outcome, run_active
from engine.planner.start import plan_uid, refuse, start_plan
from engine.planner.status import TERMINAL, PlanStatus
from engine.planner.times import requeue_after, stamp
from engine.planner.uninstall import uninstall

__all__ = ["decide"]

Json = dict[str, Any]
Observed = Mapping[Ref, Mapping[str, Any]]


def decide(pkg: Package, instance: Mapping[str, Any], observed: Observed, now: datetime,
           settings: Settings = DEFAULT_SETTINGS, previous_pkg: Package | None = None) -> Decision:
    """What to do next for `instance` of `pkg` given what the cluster shows (`observed`, absent = not found)."""
    needed = () if view.deleting(instance) else generated.missing(pkg, instance, observed)
    if needed:
        action = GenerateParameters(generated.secret_object(pkg, instance), needed)
        return Decision((action,), view.status(instance), (), None)
    instance = generated.with_generated((pkg, *((previous_pkg,) if previous_pkg else ())), instance, observed)
    status = view.status(instance)
    if view.deleting(instance):
        values = running_values(pkg, instance, dict(status.get("lastRun") or {}))
        outcome = uninstall(pkg, instance, observed, now, settings, status, values)
    else:
        outcome = reconcile(pkg, instance, observed, now, settings, previous_pkg, status)
    return concluded(pkg, instance, outcome, now, settings)


def concluded(pkg: Package, instance: Mapping[str, Any], outcome: Outcome, now: datetime,
              settings: Settings) -> Decision:
    """The Decision: status settled (secrets scrubbed first, so an unchanged decision writes an unchanged status)."""
    prior = view.recorded_status(instance)
    texts = secrets.secret_texts(pkg, view.given_parameters(instance))
    status = settle(scrubbed(outcome.status, texts), prior, now, settings, view.generation(instance),
                    view.deleting(instance))
    events = tuple(scrubbed_event(e, texts) for e in outcome.events + transition_events(prior, status))
    deadlines = (*outcome.deadlines, backoff_deadline(status, settings))
    return Decision(outcome.actions, status, events, requeue_after(deadlines, now))


def scrubbed_event(event: Event, texts: tuple[str, ...]) -> Event:
    return Event(event.reason, secrets.scrub(event.message, texts), event.type, event.ref)


def reconcile(pkg: Package, instance: Mapping[str, Any], observed: Observed, now: datetime, settings: Settings,
              previous_pkg: Package | None, status: Json) -> Outcome:
    """A live Instance: start, restart or refuse what the spec asks for, then advance the active plan."""
    last = dict(status.get("lastRun") or {})
    trigger = triggers.wanted(pkg, instance, last)
    head = Outcome(status, housekeeping(instance, last))
    if trigger and trigger.error:
        return head.then(refuse(pkg, status, trigger, now, plan_uid(view.uid(instance), trigger.plan, stamp(now))))
    if trigger and trigger.plan not in pkg.plans:
        head = head.then(actions=unknown_plan_actions(head), events=(unknown_plan(trigger.plan),))
        trigger = None
    run_pkg = package_of_run(pkg, previous_pkg, last, view.version_name(instance, pkg.version_name))
    if trigger and may_start(trigger, status, run_pkg is not None):
        return started(pkg, instance, observed, now, settings, head, trigger)
    if trigger is None and fatal_and_changed(instance, status):
        name = str(status["activePlan"]["name"])
        retry = triggers.Trigger(name, "spec changed", triggers.values_now(pkg, instance, last) or {})
        return started(pkg, instance, observed, now, settings, head, retry)
    run_pkg = run_pkg or pkg
    values = running_values(run_pkg, instance, last)
    ran = head.then(**fields(run_active(run_pkg, instance, observed, now, settings, status, values)))
    if trigger and may_start(trigger, ran.status, True):  # the running plan just ended: the waiting one goes
        return started(pkg, instance, observed, now, settings, ran, trigger)
    return ran


def started(pkg: Package, instance: Mapping[str, Any], observed: Observed, now: datetime, settings: Settings,
            head: Outcome, trigger: triggers.Trigger) -> Outcome:
    """Start `trigger.plan` and, in the same decision, every step that is ready."""
    status, events = start_plan(pkg, instance, head.status, trigger, now, settings)
    ran = run_active(pkg, instance, observed, now, settings, status, trigger.values)
    return head.then(ran.status, ran.actions, events + ran.events, ran.deadlines)


def fields(outcome: Outcome) -> dict[str, Any]:
    return {"status": outcome.status, "actions": outcome.actions, "events": outcome.events,
            "deadlines": outcome.deadlines}


def housekeeping(instance: Mapping[str, Any], last: Mapping[str, Any]) -> tuple[Action, ...]:
    """AddFinalizer for an Instance without it; ClearPlanExecution once the request is recorded in lastRun."""
    actions: list[Action] = [] if view.has_finalizer(instance) else [AddFinalizer()]
    request = view.plan_execution(instance)
    if request and request[1] == last.get("planExecutionUID"):
        actions.append(ClearPlanExecution())
    return tuple(actions)


def unknown_plan_actions(head: Outcome) -> tuple[Action, ...]:
    return () if any(isinstance(a, ClearPlanExecution) for a in head.actions) else (ClearPlanExecution(),)


def unknown_plan(name: str) -> Event:
    return Event("PlanNotFound", f"plan {name} was requested but the package has no such plan", "Warning")


def package_of_run(pkg: Package, previous_pkg: Package | None, last: Mapping[str, Any],
                   version: str) -> Package | None:
    """The package the last started plan belongs to (the previous one mid-upgrade), when it is at hand."""
    if not last or last.get("operatorVersion") == version:
        return pkg
    return previous_pkg


def may_start(trigger: triggers.Trigger, status: Mapping[str, Any], can_continue: bool) -> bool:
    """A trigger starts now unless another plan is still running (a trigger of the running plan restarts it)."""
    active = status.get("activePlan") or {}
    record = (status.get("plans") or {}).get(active.get("name")) or {}
    state = record.get("status")
    running = state is not None and state not in TERMINAL and state != PlanStatus.NEVER_RUN
    return not running or trigger.plan == active.get("name") or not can_continue


def fatal_and_changed(instance: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """The active plan is FATAL_ERROR and the spec changed since (even back to what ran): run it again."""
    active = status.get("activePlan") or {}
    record = (status.get("plans") or {}).get(active.get("name")) or {}
    generation = view.generation(instance)
    changed = generation is not None and generation != status.get("observedGeneration")
    return changed and record.get("status") == PlanStatus.FATAL_ERROR


def running_values(pkg: Package, instance: Mapping[str, Any], last: Mapping[str, Any]) -> dict[str, Any]:
    """The values the running plan started with: lastRun's, with secrets (recorded as digests) from the spec."""
    current = triggers.values_now(pkg, instance, last) or view.given_parameters(instance)
    recorded = dict(last.get("parameters") or current)
    secret = {p.name for p in pkg.parameters if p.secret}
    return {k: current.get(k) if k in secret else v for k, v in recorded.items()}
