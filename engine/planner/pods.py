"""Why a Job's pods do not run: the scheduler's message for a pod it cannot place (no node matches, taints...),
and why a pod of a failed Job failed (the container's exit code, reason and message).

A Job's own status never says that its pod is unschedulable, so a step waiting on such a Job would only
report `0/1 succeeded`; nor why its pods failed, so a failed step would only say `BackoffLimitExceeded`.
The planner reads the pods the Job controls from `observed`: a view that can list
them (`PodLister`, the runner's watch caches) or, in tests, a plain mapping holding them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from engine import health

__all__ = ["PodLister", "behind", "controlled_pods", "failure", "unscheduled"]

Json = Mapping[str, Any]


@runtime_checkable
class PodLister(Protocol):
    def controlled_pods(self, owner: Json) -> list[Json]:
        """The pods whose controller is `owner` (by uid), in its namespace."""
        ...


def controlled_pods(observed: Mapping[Any, Json], owner: Json) -> list[Json]:
    if isinstance(observed, PodLister):
        return observed.controlled_pods(owner)
    return [obj for obj in observed.values() if obj.get("kind") == "Pod" and controller_uid(obj) == uid_of(owner)]


def unscheduled(observed: Mapping[Any, Json], job: Json) -> str | None:
    """`pod NAME cannot be scheduled: <the scheduler's message>` for the first such pod of the Job, else None."""
    for pod in sorted(controlled_pods(observed, job), key=lambda p: str((p.get("metadata") or {}).get("name"))):
        for condition in (pod.get("status") or {}).get("conditions") or []:
            if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
                why = " ".join(str(condition.get("message") or condition.get("reason") or "Unschedulable").split())
                return f"pod {(pod.get('metadata') or {}).get('name')} cannot be scheduled: {why}"
    return None


def failure(observed: Mapping[Any, Json], job: Json) -> str | None:
    """`Pod NS/NAME failed: <why>` for the first failed pod of the Job, else None."""
    for pod in sorted(controlled_pods(observed, job), key=lambda p: str((p.get("metadata") or {}).get("name"))):
        if (pod.get("status") or {}).get("phase") == "Failed":
            return health.compute(pod).message
    return None


def behind(observed: Mapping[Any, Json], job: Json) -> bool:
    """Whether the pods seen of a failed Job are older than the Job: one of them still runs (not Succeeded or
    Failed, and not being deleted). The Job controller marks a Job failed only after its pods ended or were deleted,
    but the watch of Pods and that of Jobs arrive apart; the event of the pod's end is on its way, and saying why the
    Job failed waits for it."""
    for pod in controlled_pods(observed, job):
        meta, phase = pod.get("metadata") or {}, (pod.get("status") or {}).get("phase")
        if phase not in ("Succeeded", "Failed") and not meta.get("deletionTimestamp"):
            return True
    return False


def uid_of(obj: Json) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def controller_uid(obj: Json) -> str | None:
    for owner in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if owner.get("controller"):
            return str(owner.get("uid") or "")
    return None
