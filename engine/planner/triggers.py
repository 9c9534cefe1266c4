"""Which plan the spec asks for, level-based: `spec` compared with `status.lastRun` (what the last plan ran with)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine import params
from engine.errors import ImmutableParameterChanged, PermanentError
from engine.model import Package
from engine.planner import secrets, view

__all__ = ["Trigger", "upgrade_plan", "values_now", "wanted"]


@dataclass(frozen=True)
class Trigger:
    """A plan the spec asks for, with the resolved parameter values; `error` set: refused, the plan is FATAL_ERROR."""

    plan: str
    reason: str  # install | request | upgrade | parameters
    values: Mapping[str, Any] = field(default_factory=dict)
    error: str = ""
    execution_uid: str | None = None
    dropped: tuple[str, ...] = ()  # names given in spec that the package does not declare (after an upgrade)
    removed: tuple[str, ...] = ()  # parameters an upgrade removed (reported in an Event)


def upgrade_plan(pkg: Package) -> str:
    """The plan a package version change runs: `upgrade`, else `update`, else `deploy`."""
    return next(p for p in ("upgrade", "update", "deploy") if p in pkg.plans)


def wanted(pkg: Package, instance: Mapping[str, Any], last: Mapping[str, Any]) -> Trigger | None:
    """The plan the spec asks for that `last` (status.lastRun) has not run yet, or None."""
    upgrading = bool(last) and last.get("operatorVersion") != view.version_name(instance, pkg.version_name)
    given = view.given_parameters(instance)
    dropped = dropped_names(pkg, given, last, upgrading)
    request = new_request(instance, last)
    try:
        values = params.resolve(pkg, {k: v for k, v in given.items() if k not in dropped})
    except PermanentError as err:
        return Trigger(plan_for_invalid(pkg, last, given, request, upgrading), "parameters", error=str(err))
    if request:
        return Trigger(request[0], "request", values, execution_uid=request[1], dropped=dropped)
    if not last:
        return Trigger("deploy", "install", values, dropped=dropped)
    if upgrading:
        return Trigger(upgrade_plan(pkg), "upgrade", values, dropped=dropped, removed=removed_names(pkg, given, last))
    return changed_parameters(pkg, instance, last, values, dropped)


def changed_parameters(
    pkg: Package, instance: Mapping[str, Any], last: Mapping[str, Any], values: Mapping[str, Any],
    dropped: tuple[str, ...],
) -> Trigger | None:
    """The trigger of the parameters that differ from the last run (secrets compared by digest)."""
    old = dict(last.get("parameters") or {})
    new = secrets.fingerprint(pkg, values, view.uid(instance))
    try:
        plan = params.trigger_for_change(pkg, old, new)
    except ImmutableParameterChanged as err:
        return Trigger(trigger_of(pkg, err.name), "parameters", error=str(err))
    except PermanentError as err:
        return Trigger(pkg.default_trigger(), "parameters", error=str(err))
    return Trigger(plan, "parameters", values, dropped=dropped) if plan else None


def new_request(instance: Mapping[str, Any], last: Mapping[str, Any]) -> tuple[str, str] | None:
    """A `plan trigger` request (planName, uid) not recorded in the last run yet."""
    request = view.plan_execution(instance)
    return request if request and request[1] != last.get("planExecutionUID") else None


def dropped_names(pkg: Package, given: Mapping[str, Any], last: Mapping[str, Any], upgrading: bool) -> tuple[str, ...]:
    """Given names to leave out: undeclared ones during an upgrade, and those an earlier upgrade dropped."""
    declared = {p.name for p in pkg.parameters}
    earlier = set(last.get("removedParameters") or [])
    return tuple(sorted(k for k in given if k not in declared and (upgrading or k in earlier)))


def removed_names(pkg: Package, given: Mapping[str, Any], last: Mapping[str, Any]) -> tuple[str, ...]:
    """Parameters set before the upgrade (given or run with) that the new package no longer declares."""
    declared = {p.name for p in pkg.parameters}
    return tuple(sorted((set(given) | set(last.get("parameters") or {})) - declared))


def trigger_of(pkg: Package, name: str) -> str:
    try:
        return pkg.parameter(name).trigger or pkg.default_trigger()
    except KeyError:
        return pkg.default_trigger()


def plan_for_invalid(
    pkg: Package, last: Mapping[str, Any], given: Mapping[str, Any], request: tuple[str, str] | None,
    upgrading: bool,
) -> str:
    """The plan an invalid spec would have run: it is the one marked FATAL_ERROR."""
    if request and request[0] in pkg.plans:
        return request[0]
    if not last:
        return "deploy"
    if upgrading:
        return upgrade_plan(pkg)
    old = last.get("parameters") or {}
    plans = {trigger_of(pkg, k) for k, v in given.items() if old.get(k) != v}
    return "deploy" if "deploy" in plans or not plans else min(plans)


def values_now(pkg: Package, instance: Mapping[str, Any], last: Mapping[str, Any]) -> dict[str, Any] | None:
    """The spec's parameter values resolved against `pkg` (names an upgrade dropped left out), or None if invalid."""
    given = view.given_parameters(instance)
    dropped = set(dropped_names(pkg, given, last, upgrading=False))
    try:
        return params.resolve(pkg, {k: v for k, v in given.items() if k not in dropped})
    except PermanentError:
        return None
