"""Running the active plan for one decision: render it, advance or heal it, keep the inventory, prune when complete."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.errors import PermanentError
from engine.model import Package, Plan
from engine.planner import indexing, inventory, pipes, rendering, view
from engine.planner.actions import PRUNE_STEP, Action, Apply, Delete, Event, Settings
from engine.planner.execute import PlanScope, Progress, advance, heal
from engine.planner.refs import Ref
from engine.planner.stamping import Owner
from engine.planner.status import PlanStatus

__all__ = ["Outcome", "owner_of", "run_active"]

Json = dict[str, Any]
Observed = Mapping[Ref, Mapping[str, Any]]


@dataclass(frozen=True)
class Outcome:
    """A status in the making, with the actions, Events and deadlines decided so far."""

    status: Json
    actions: tuple[Action, ...] = ()
    events: tuple[Event, ...] = ()
    deadlines: tuple[datetime, ...] = ()

    def then(self, status: Json | None = None, actions: tuple[Action, ...] = (), events: tuple[Event, ...] = (),
             deadlines: tuple[datetime, ...] = ()) -> Outcome:
        return Outcome(self.status if status is None else status, self.actions + actions, self.events + events,
                       self.deadlines + deadlines)


def owner_of(pkg: Package, instance: Mapping[str, Any]) -> Owner:
    return Owner(view.name(instance), view.namespace(instance), view.uid(instance), pkg.name)


def run_active(pkg: Package, instance: Mapping[str, Any], observed: Observed, now: datetime, settings: Settings,
               status: Json, values: Mapping[str, Any], prune: bool = True) -> Outcome:
    """Advance the active plan (or heal it when COMPLETE); a plan that does not render is FATAL_ERROR."""
    name = str((status.get("activePlan") or {}).get("name") or "")
    record = (status.get("plans") or {}).get(name)
    if not record or record.get("status") == PlanStatus.FATAL_ERROR or name not in pkg.plans:
        return Outcome(status)
    owner = owner_of(pkg, instance)
    try:
        scope = plan_scope(pkg, pkg.plan(name), observed, now, settings, values, owner)
    except PermanentError as err:
        failed = {**record, "status": PlanStatus.FATAL_ERROR.value, "message": str(err)}
        return Outcome(with_record(status, name, failed))
    progress = heal(scope, record) if record.get("status") == PlanStatus.COMPLETE else advance(scope, record)
    return keep_inventory(Outcome(with_record(status, name, progress.record)), scope, progress, prune)


def plan_scope(pkg: Package, plan: Plan, observed: Observed, now: datetime, settings: Settings,
               values: Mapping[str, Any], owner: Owner) -> PlanScope:
    """Everything the plan's decision reads; raises RenderError unless every task renders."""
    scene = rendering.Scene(owner, values, pipes.pipe_values(pkg, owner, observed))
    rendered = rendering.render_plan(pkg, plan, scene)
    index = indexing.plan_index(pkg, plan, rendered, values, owner)
    return PlanScope(pkg, plan, rendered, index, observed, values, owner, now, settings)


def with_record(status: Json, name: str, record: Json) -> Json:
    return {**status, "plans": {**(status.get("plans") or {}), name: record}}


def keep_inventory(outcome: Outcome, scope: PlanScope, progress: Progress, prune: bool) -> Outcome:
    """Record what was applied, forget what is gone and unwanted, and prune after completion."""
    applied = [obj for a in progress.actions if isinstance(a, Apply) for obj in a.objects]
    desired = scope.index.desired
    more = {ref for o in applied if (ref := Ref.of(o)) not in desired}
    keep = desired | more if more else desired  # what the plan keeps: the same set every pass, not a copy of it
    complete = progress.record.get("status") == PlanStatus.COMPLETE
    extra = deploy_refs(scope) if prune and complete else None
    owner = scope.owner
    if extra is not None:
        keep |= extra
    items = inventory.with_applied(inventory.entries(outcome.status), applied, scope.plan.name)
    items, shown = inventory.standing(items, scope.observed, keep, owner.namespace, owner.name)
    pruned: tuple[Action, ...] = ()
    if extra is not None:
        gone = tuple(r for r in inventory.prunable(items, keep) if r in scope.observed)
        pruned = (Delete(PRUNE_STEP, gone),) if gone else ()
    status = {**outcome.status, "appliedResources": shown}
    return outcome.then(status, progress.actions + pruned, progress.events, progress.deadlines)


def deploy_refs(scope: PlanScope) -> frozenset[Ref] | None:
    """What `deploy` keeps (so pruning after another plan spares it); None when deploy does not render."""
    if scope.plan.name == "deploy" or "deploy" not in scope.pkg.plans:
        return frozenset()
    try:
        other = plan_scope(scope.pkg, scope.pkg.plan("deploy"), scope.observed, scope.now, scope.settings,
                           scope.values, scope.owner)
    except PermanentError:
        return None
    return other.index.desired
