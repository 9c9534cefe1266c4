"""Health of run-to-completion work: Jobs and Pods."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.health.objects import (
    EMPTY,
    Obj,
    as_map,
    conditions_of,
    explain,
    int_field,
    is_true,
    one_line,
    spec_of,
    status_of,
)
from engine.health.verdicts import Status, failed, healthy, progressing

MESSAGE_SHOWN = 300  # characters of the runtime's message quoted in a failure
WRITTEN_BY_CONTAINER = ("Error", "Completed")  # reasons whose message is what the container wrote: never quoted


def job(obj: Obj) -> Status:
    conditions = conditions_of(obj)
    if is_true(conditions, "Failed"):
        return failed(obj, explain(conditions["Failed"], "Failed"))
    done = job_progress(obj)
    if is_true(conditions, "Complete"):
        return healthy(obj, f"{done}, complete")
    if is_true(conditions, "FailureTarget"):
        why = explain(conditions["FailureTarget"], "FailureTarget")
        return progressing(obj, f"{done}; failing ({why}), waiting for its pods to terminate")
    if spec_of(obj).get("suspend") is True or is_true(conditions, "Suspended"):
        return progressing(obj, f"{done}; suspended")
    unschedulable = [c for c in conditions.values() if c.get("reason") == "Unschedulable"]
    if unschedulable:
        return progressing(obj, f"{done}; pods cannot be scheduled: {explain(unschedulable[0])}")
    return progressing(obj, done)


def job_progress(obj: Obj) -> str:
    """`n/m succeeded` (the API server defaults completions to 1 when neither it nor parallelism is set)."""
    spec, status = spec_of(obj), status_of(obj)
    succeeded, fails = int_field(status, "succeeded"), int_field(status, "failed")
    completions = spec.get("completions", None if "parallelism" in spec else 1)
    done = f"{succeeded}/{completions} succeeded" if isinstance(completions, int) else f"{succeeded} succeeded"
    return f"{done}, {fails} failed" if fails else done


def pod(obj: Obj) -> Status:
    status, conditions = status_of(obj), conditions_of(obj)
    phase = status.get("phase") or "Pending"
    if phase == "Succeeded":
        return healthy(obj, "Succeeded")
    if phase == "Failed":
        return failed(obj, pod_failure(status))
    if phase == "Running" and is_true(conditions, "Ready"):
        return healthy(obj, "Running and ready")
    scheduled = conditions.get("PodScheduled", EMPTY)
    if scheduled.get("status") == "False":
        return progressing(obj, f"cannot be scheduled: {explain(scheduled, 'Unschedulable')}")
    waiting = pod_waiting(status)
    state = "Running, not ready" if phase == "Running" else phase
    return progressing(obj, f"{state}; {waiting}" if waiting else state)


def pod_failure(status: Mapping[str, Any]) -> str:
    """Why a pod failed: its own reason, else the first container that exited non-zero, with the runtime's message
    (why it could not start) but never one the container wrote itself (it may hold anything, secrets too)."""
    if status.get("reason") or status.get("message"):
        return explain(status)
    for container in containers_of(status):
        ended = as_map(as_map(container.get("state")).get("terminated"))
        if int_field(ended, "exitCode"):
            why = f" ({one_line(ended['reason'])})" if ended.get("reason") else ""
            runtime_said = ended.get("message") and ended.get("reason") not in WRITTEN_BY_CONTAINER
            said = f": {one_line(str(ended['message']))[:MESSAGE_SHOWN]}" if runtime_said else ""
            return f"container {container.get('name')} exited with code {ended['exitCode']}{why}{said}"
    return "phase Failed"


def pod_waiting(status: Mapping[str, Any]) -> str:
    """`container NAME: reason: message` for the first container waiting on something other than creation."""
    for container in containers_of(status):
        waiting = as_map(as_map(container.get("state")).get("waiting"))
        if waiting.get("reason") and waiting.get("reason") != "ContainerCreating":
            return f"container {container.get('name')}: {explain(waiting)}"
    return ""


def containers_of(status: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    found: list[Mapping[str, Any]] = []
    for key in ("initContainerStatuses", "containerStatuses"):
        items = status.get(key)
        found.extend(c for c in (items if isinstance(items, list) else []) if isinstance(c, Mapping))
    return found
