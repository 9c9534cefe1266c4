"""Following a plan run by watching its Instance: which run a command waits for, and when it has ended.

A command that changes an Instance knows the plan its change triggers and that plan's uid before
the change. The run it waits for is that plan with a new uid, seen at the Instance's new generation
or later, ending COMPLETE or FATAL_ERROR (ERROR is retried, so it is not an end).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from engine.cli import progress
from engine.cli.cluster import INSTANCE
from engine.errors import PermanentError, Timeout
from engine.kube import Kube
from engine.runner import changes

__all__ = ["Follower", "Target", "ended_with", "follow", "follow_deletion", "outcome", "target_after"]

ENDED = frozenset({"COMPLETE", "FATAL_ERROR"})
Json = dict[str, Any]


@dataclass(frozen=True)
class Target:
    """The run to wait for: `plan` (None: the active plan) with a uid other than `previous_uid`, at `generation`+."""

    plan: str | None
    previous_uid: str | None = None
    generation: int = 0


def plan_record(instance: Mapping[str, Any], plan: str | None) -> Mapping[str, Any]:
    status = instance.get("status") or {}
    name = plan or (status.get("activePlan") or {}).get("name")
    return (status.get("plans") or {}).get(name) or {}


def target_after(instance: Mapping[str, Any], plan: str | None, changed: Mapping[str, Any] | None = None) -> Target:
    """The run of `plan` that a change of `instance` (written as `changed`) starts."""
    generation = ((changed or instance).get("metadata") or {}).get("generation")
    uid = plan_record(instance, plan).get("uid") if plan else None
    return Target(plan, str(uid) if uid else None, generation if isinstance(generation, int) else 0)


def outcome(instance: Mapping[str, Any], target: Target) -> str | None:
    """COMPLETE or FATAL_ERROR once the target run ended; None while it runs or has not started."""
    status = instance.get("status") or {}
    seen = status.get("observedGeneration")
    if not isinstance(seen, int) or seen < target.generation:
        return None
    record = plan_record(instance, target.plan)
    uid, state = record.get("uid"), record.get("status")
    if not uid or uid == target.previous_uid or state not in ENDED:
        return None
    return str(state)


class Follower:
    """A wait predicate that prints a line for each run event between the statuses it is shown."""

    def __init__(self, start: Mapping[str, Any], done: Callable[[Json | None], bool], out: TextIO) -> None:
        meta = start.get("metadata") or {}
        self.namespace, self.name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        self.last: Mapping[str, Any] = start.get("status") or {}
        self.latest: Json | None = dict(start)
        self._done, self._out = done, out

    def __call__(self, obj: Json | None) -> bool:
        if obj is not None:
            status = obj.get("status") or {}
            for event in changes(self.namespace, self.name, self.last, status):
                self._out.write(progress.event_line(event) + "\n")
            self._out.flush()
            self.last = status
        self.latest = obj
        return self._done(obj)


def follow(kube: Kube, start: Mapping[str, Any], target: Target, timeout: float, out: TextIO) -> tuple[Json, str]:
    """Watch the Instance, printing run events, until the target run ends: (the Instance, COMPLETE|FATAL_ERROR)."""

    def ended(obj: Json | None) -> bool:
        if obj is None:
            raise PermanentError(f"instance {follower.name!r} was deleted while its plan ran")
        return outcome(obj, target) is not None

    follower = Follower(start, ended, out)
    what = f"plan {target.plan} ending" if target.plan else "the active plan ending"
    try:
        found = kube.wait_for(*INSTANCE, follower.name, follower.namespace, follower, timeout, condition=what,
                              seen=start)
    except Timeout:
        raise Timeout(f"{what} of instance {follower.name!r} did not happen within {progress.duration_text(timeout)}"
                      f"{standing(follower.latest, target.plan)}") from None
    assert found is not None
    return found, str(outcome(found, target))


def follow_deletion(kube: Kube, start: Mapping[str, Any], timeout: float, out: TextIO) -> None:
    """Watch the Instance, printing run events (its cleanup plan), until it is gone."""
    follower = Follower(start, lambda obj: obj is None, out)
    try:
        kube.wait_for(*INSTANCE, follower.name, follower.namespace, follower, timeout, condition="deletion",
                      seen=start)
    except Timeout:
        raise Timeout(f"instance {follower.name!r} was not gone within {progress.duration_text(timeout)}"
                      f"{standing(follower.latest, None)}") from None


def standing(instance: Mapping[str, Any] | None, plan: str | None) -> str:
    """`; plan deploy is IN_PROGRESS (step app: waiting for ...)`, or nothing when there is no plan record."""
    status = (instance or {}).get("status") or {}
    if not status:
        return "; no manager has picked it up (is the kplan manager running?)"
    name = plan or (status.get("activePlan") or {}).get("name")
    record = (status.get("plans") or {}).get(name) or {}
    if not record:
        return ""
    waiting = next((f"step {s.get('name')}: {s['message']}" for p in record.get("phases") or []
                    for s in p.get("steps") or [] if s.get("message") and s.get("status") != "COMPLETE"), "")
    detail = f" ({record.get('message') or waiting})" if record.get("message") or waiting else ""
    return f"; plan {name} is {record.get('status')}{detail}"


def ended_with(instance: Mapping[str, Any], state: str, plan: str | None) -> int:
    """0 for COMPLETE; raises for FATAL_ERROR with the failing step's message."""
    if state == "COMPLETE":
        return 0
    record = plan_record(instance, plan)
    name = plan or ((instance.get("status") or {}).get("activePlan") or {}).get("name")
    meta = instance.get("metadata") or {}
    why = f": {record['message']}" if record.get("message") else ""
    raise PermanentError(f"plan {name} of instance {meta.get('name')!r} ended {state}{why}")
