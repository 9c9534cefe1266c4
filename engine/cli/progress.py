"""Printing plans: one line per run event, and the plan → phases → steps tree of an Instance's status."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from engine.model import Package, Plan
from engine.planner.times import parse
from engine.runner import PlanFinished, PlanStarted, RunEvent, StepCompleted, StepFailed, StepStarted

__all__ = ["duration_text", "event_line", "plan_tree", "status_tree"]

NEVER_RUN = "NEVER_RUN"
ENDED = frozenset({"COMPLETE", "FATAL_ERROR"})
Json = Mapping[str, Any]


def event_line(event: RunEvent) -> str:
    """`deploy/main/app: started`, `... COMPLETE`, `... ERROR: why`, `plan deploy: COMPLETE in 3s`."""
    if isinstance(event, PlanStarted):
        return f"plan {event.plan}: started"
    if isinstance(event, PlanFinished):
        took = f" in {duration_text(event.duration)}" if event.duration is not None else ""
        why = f": {event.message}" if event.message and event.status != "COMPLETE" else ""
        return f"plan {event.plan}: {event.status}{took}{why}"
    where = f"{event.plan}/{event.phase}/{event.step}"
    if isinstance(event, StepStarted):
        return f"{where}: started"
    if isinstance(event, StepCompleted):
        return f"{where}: COMPLETE"
    assert isinstance(event, StepFailed)
    return f"{where}: {'FATAL_ERROR' if event.fatal else 'ERROR'}: {event.message}"


def duration_text(seconds: float | None) -> str:
    """`0s`, `42s`, `3m5s`, `1h2m` (whole seconds)."""
    if seconds is None:
        return ""
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m"
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


def status_tree(instance: Json, pkg: Package | None, now: datetime, plans: Sequence[str] | None = None) -> str:
    """KUDO's `plan status`: the Instance, then each plan (all of the package's by default) with phases and steps."""
    meta, status = instance.get("metadata") or {}, instance.get("status") or {}
    version = ((instance.get("spec") or {}).get("operatorVersion") or {}).get("name") or ""
    active = (status.get("activePlan") or {}).get("name") or ""
    recorded = status.get("plans") or {}
    names = list(plans) if plans is not None else sorted(set(pkg.plans if pkg else ()) | set(recorded))
    lines = [f'Plan(s) for "{meta.get("name")}" in namespace "{meta.get("namespace")}":', "."]
    lines.append(f'└── {meta.get("name")} (Operator-Version: "{version}" Active-Plan: "{active or "none"}")')
    for index, name in enumerate(names):
        plan = pkg.plans.get(name) if pkg else None
        lines += indented(plan_tree(name, recorded.get(name) or {}, plan, now), "    ", index == len(names) - 1)
    return "\n".join(lines) + "\n"


def plan_tree(name: str, record: Json, plan: Plan | None, now: datetime) -> list[str]:
    """A plan's line and the lines of its phases and steps (from the record, else from the package's plan)."""
    state = str(record.get("status") or NEVER_RUN)
    head = f"Plan {name}{strategy(plan)} [{state}]"
    if record.get("lastUpdatedAt"):
        head += f", last updated {record['lastUpdatedAt']}"
    head += took(record, now, state)
    if record.get("message") and state not in ("COMPLETE", "IN_PROGRESS"):
        head += f": {record['message']}"
    phases = list(record.get("phases") or []) or blank_phases(plan)
    lines = [head]
    for index, phase in enumerate(phases):
        lines += indented(phase_tree(phase, plan, now), "", index == len(phases) - 1)
    return lines


def phase_tree(phase: Json, plan: Plan | None, now: datetime) -> list[str]:
    name = str(phase.get("name"))
    declared = next((p for p in plan.phases if p.name == name), None) if plan else None
    kind = f" ({declared.strategy.value} strategy)" if declared else ""
    lines = [f"Phase {name}{kind} [{phase.get('status') or NEVER_RUN}]"]
    steps = list(phase.get("steps") or [])
    for index, step in enumerate(steps):
        lines += indented([step_line(step, now)], "", index == len(steps) - 1)
    return lines


def step_line(step: Json, now: datetime) -> str:
    state = str(step.get("status") or NEVER_RUN)
    line = f"Step {step.get('name')} [{state}]"
    if step.get("message"):
        line += f": {step['message']}"
    attempts = int(step.get("attempts") or 0)
    if attempts > 1:
        line += f" (attempt {attempts})"
    return line + took(step, now, state)


def took(record: Json, now: datetime, state: str) -> str:
    """` (3s)`: start to last update once ended, start to now while running; nothing before it started."""
    started = parse(record.get("startedAt"))
    if started is None or state in (NEVER_RUN, "PENDING"):
        return ""
    until = parse(record.get("lastUpdatedAt")) if state in ENDED else now
    return f" ({duration_text(max(((until or now) - started).total_seconds(), 0.0))})"


def strategy(plan: Plan | None) -> str:
    return f" ({plan.strategy.value} strategy)" if plan else ""


def blank_phases(plan: Plan | None) -> list[Json]:
    """Phases of a plan that never ran, from the package."""
    if plan is None:
        return []
    return [{"name": p.name, "status": NEVER_RUN, "steps": [{"name": s.name, "status": NEVER_RUN} for s in p.steps]}
            for p in plan.phases]


def indented(lines: Iterable[str], prefix: str, last: bool) -> list[str]:
    """Hang `lines` (a head and its children) under a tree branch."""
    found = list(lines)
    if not found:
        return []
    branch, rest = ("└── ", "    ") if last else ("├── ", "│   ")
    return [prefix + branch + found[0]] + [prefix + rest + line for line in found[1:]]
