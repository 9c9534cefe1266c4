"""The pods a workload controller owns: making them from its template, and counting the ready and available ones."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine.simulators import conditions, steering
from engine.simulators.api import POD, Api, Kind
from engine.simulators.controllers.workloads import controlled_by, owner_reference

JsonDict = dict[str, Any]
TERMINAL = ("Succeeded", "Failed")


def new_pod(kind: Kind, owner: JsonDict, *, name: str = "", generate_name: str = "",
            labels: Mapping[str, str] | None = None, annotations: Mapping[str, str] | None = None,
            spec: Mapping[str, Any] | None = None, finalizers: Sequence[str] = ()) -> JsonDict:
    """A pod from the owner's template, controlled by the owner, carrying the owner's simulator annotations."""
    meta = owner["metadata"]
    template = (owner.get("spec") or {}).get("template") or {}
    tmeta = template.get("metadata") or {}
    own = {k: v for k, v in steering.annotations_of(owner).items() if k.startswith(steering.PREFIX)}
    notes = {**own, **(tmeta.get("annotations") or {}), **(annotations or {})}
    metadata: JsonDict = {"namespace": meta.get("namespace"), "labels": {**(tmeta.get("labels") or {}),
                                                                          **(labels or {})},
                          "ownerReferences": [owner_reference(kind, owner)]}
    metadata.update({"name": name} if name else {"generateName": generate_name})
    if notes:
        metadata["annotations"] = notes
    if finalizers:
        metadata["finalizers"] = list(finalizers)
    return {"metadata": metadata, "spec": {**(template.get("spec") or {}), **(spec or {})}}


def owned_pods(api: Api, owner: JsonDict) -> list[JsonDict]:
    uid = str(owner["metadata"]["uid"])
    return [p for p in api.owned_by(POD, uid) if controlled_by(p, uid)]


def is_terminating(pod: JsonDict) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def is_live(pod: JsonDict) -> bool:
    """Counted as a replica: not being deleted and not ended."""
    return not is_terminating(pod) and (pod.get("status") or {}).get("phase") not in TERMINAL


def is_ready(pod: JsonDict) -> bool:
    return conditions.is_true((pod.get("status") or {}).get("conditions") or [], "Ready")


def ready_for(pod: JsonDict, now: datetime.datetime) -> float:
    """Seconds the pod has been Ready (-1 when it is not)."""
    ready = conditions.find((pod.get("status") or {}).get("conditions") or [], "Ready")
    if ready is None or ready.get("status") != "True":
        return -1.0
    try:
        since = datetime.datetime.fromisoformat(str(ready.get("lastTransitionTime")).replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return (now - since).total_seconds()


def availability(pods: Iterable[JsonDict], min_ready_seconds: int) -> tuple[int, float | None]:
    """How many pods are available (Ready for minReadySeconds), and seconds until the next one may be."""
    now = datetime.datetime.now(datetime.UTC)
    available, soonest = 0, None
    for pod in pods:
        held = ready_for(pod, now)
        if held < 0:
            continue
        if held >= min_ready_seconds:
            available += 1
        else:
            wait = min_ready_seconds - held + 0.05
            soonest = wait if soonest is None else min(soonest, wait)
    return available, soonest


def min_ready_of(obj: JsonDict) -> int:
    value = (obj.get("spec") or {}).get("minReadySeconds")
    return int(value) if isinstance(value, int) else 0


def removal_order(pods: Sequence[JsonDict]) -> list[JsonDict]:
    """Which pods a scale-down removes first, as the ReplicaSet controller ranks them: unscheduled, then not
    running, then not ready, then the newest."""
    newest_first = sorted(pods, key=lambda p: (str(p["metadata"].get("creationTimestamp") or ""),
                                               p["metadata"]["name"]), reverse=True)
    return sorted(newest_first, key=lambda p: (bool((p.get("spec") or {}).get("nodeName")),
                                               (p.get("status") or {}).get("phase") == "Running", is_ready(p)))
