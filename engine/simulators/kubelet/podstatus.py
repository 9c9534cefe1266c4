"""The status a kubelet and the scheduler write on a Pod, built from the previous status so times stay put."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from engine.simulators import conditions, steering
from engine.simulators.kubelet.containerlogs import container_id
from engine.simulators.kubelet.podruns import ContainerState
from engine.simulators.kubelet.processes import Exit

JsonDict = dict[str, Any]
POD_CONDITION = {"lastProbeTime": None}


class Stage(StrEnum):
    """Where a scheduled pod's containers are."""

    STARTING = "starting"  # running, not ready yet (restartPolicy Always, before its duration)
    READY = "ready"
    CRASHING = "crashing"  # CrashLoopBackOff (restartPolicy Always with the fail annotation)
    SUCCEEDED = "succeeded"
    FAILED = "failed"


@dataclass(frozen=True)
class Placement:
    node_ip: str
    pod_ip: str
    now: str


def image_ref(image: str) -> str:
    """`nginx` → `docker.io/library/nginx:latest`, as the runtime reports it."""
    name, _, digest = image.partition("@")
    first = name.split("/", 1)[0]
    if "/" not in name or ("." not in first and ":" not in first and first != "localhost"):
        name = f"docker.io/{name}" if "/" in name else f"docker.io/library/{name}"
    if digest:
        return f"{name}@{digest}"
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def repository(ref: str) -> str:
    """`docker.io/library/nginx:1.27` → `docker.io/library/nginx`."""
    if "@" in ref:
        return ref.split("@", 1)[0]
    head, _, tail = ref.rpartition("/")
    return f"{head}/{tail.split(':', 1)[0]}"


def image_id(image: str) -> str:
    ref = image_ref(image)
    return f"{repository(ref)}@sha256:{hashlib.sha256(ref.encode()).hexdigest()}"


def scheduled_condition(status: JsonDict, ok: bool, message: str, now: str) -> list[JsonDict]:
    return conditions.put(status.get("conditions") or [], "PodScheduled", ok, "" if ok else "Unschedulable",
                          message, now=now, extra=POD_CONDITION)


def unschedulable_status(pod: JsonDict, message: str, now: str) -> JsonDict:
    status = dict(pod.get("status") or {})
    return {**status, "phase": "Pending", "conditions": scheduled_condition(status, False, message, now)}


def _previous(status: JsonDict, group: str, name: str) -> JsonDict:
    return next((c for c in status.get(group) or [] if c.get("name") == name), {})


def _started_at(previous: JsonDict, default: str) -> str:
    state = previous.get("state") or {}
    for phase in ("running", "terminated"):
        if (state.get(phase) or {}).get("startedAt"):
            return str(state[phase]["startedAt"])
    return str(((previous.get("lastState") or {}).get("terminated") or {}).get("startedAt") or default)


def _finished_at(previous: JsonDict, default: str) -> str:
    return str(((previous.get("state") or {}).get("terminated") or {}).get("finishedAt") or default)


def container_status(pod: JsonDict, container: JsonDict, stage: Stage, when: Placement, start: str) -> JsonDict:
    status, name = pod.get("status") or {}, str(container.get("name") or "")
    previous = _previous(status, "containerStatuses", name)
    cid = container_id(str(pod["metadata"].get("uid") or ""), name)
    started = _started_at(previous, start)
    entry: JsonDict = {"name": name, "image": image_ref(str(container.get("image") or "")),
                       "imageID": image_id(str(container.get("image") or "")), "containerID": cid,
                       "ready": stage == Stage.READY, "started": stage in (Stage.STARTING, Stage.READY),
                       "restartCount": 1 if stage == Stage.CRASHING else 0, "lastState": {}}
    if stage in (Stage.STARTING, Stage.READY):
        entry["state"] = {"running": {"startedAt": started}}
    elif stage == Stage.CRASHING:
        entry["state"] = {"waiting": {"reason": "CrashLoopBackOff", "message": (
            f"back-off 10s restarting failed container={name} pod={pod['metadata']['name']}_"
            f"{pod['metadata'].get('namespace', '')}({pod['metadata'].get('uid', '')})")}}
        entry["lastState"] = {"terminated": _terminated(pod, name, cid, 1, started, _finished_at(
            {"state": previous.get("lastState") or {}}, when.now))}
    else:
        code = 0 if stage == Stage.SUCCEEDED else 1
        entry["state"] = {"terminated": _terminated(pod, name, cid, code, started, _finished_at(previous, when.now))}
    return entry


def _terminated(pod: JsonDict, name: str, cid: str, code: int, started: str, finished: str) -> JsonDict:
    state: JsonDict = {"exitCode": code, "reason": "Completed" if code == 0 else "Error", "startedAt": started,
                       "finishedAt": finished, "containerID": cid}
    message = steering.termination_message(pod, name)
    if message:
        state["message"] = message
    return state


def init_status(pod: JsonDict, container: JsonDict, start: str) -> JsonDict:
    """An init container that ran to completion before the main containers started."""
    name = str(container.get("name") or "")
    cid = container_id(str(pod["metadata"].get("uid") or ""), name)
    return {"name": name, "image": image_ref(str(container.get("image") or "")),
            "imageID": image_id(str(container.get("image") or "")), "containerID": cid, "ready": True,
            "started": False, "restartCount": 0, "lastState": {},
            "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": start, "finishedAt": start,
                                     "containerID": cid}}}


def pod_conditions(status: JsonDict, stage: Stage, names: Sequence[str], now: str) -> list[JsonDict]:
    """PodReadyToStartContainers, Initialized, Ready, ContainersReady, PodScheduled, in the kubelet's order."""
    done = stage in (Stage.SUCCEEDED, Stage.FAILED)
    ready = stage == Stage.READY
    if done:
        reason = "PodCompleted" if stage == Stage.SUCCEEDED else "PodFailed"
        not_ready = (reason, "")
    else:
        not_ready = ("ContainersNotReady", f"containers with unready status: [{' '.join(names)}]")
    old = status.get("conditions") or []
    wanted = [
        ("PodReadyToStartContainers", not done, "", ""),
        ("Initialized", True, "PodCompleted" if stage == Stage.SUCCEEDED else "", ""),
        ("Ready", ready, *(("", "") if ready else not_ready)),
        ("ContainersReady", ready, *(("", "") if ready else not_ready)),
        ("PodScheduled", True, "", ""),
    ]
    result: list[JsonDict] = []
    for type_, ok, reason, message in wanted:
        updated = conditions.put(old, type_, ok, reason, message, now=now, extra=POD_CONDITION)
        result.append(conditions.find(updated, type_) or {})
    return result


def pod_status(pod: JsonDict, stage: Stage, when: Placement) -> JsonDict:
    """The whole status of a scheduled pod at `stage`."""
    status = dict(pod.get("status") or {})
    spec = pod.get("spec") or {}
    start = str(status.get("startTime") or when.now)
    containers = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    fresh: JsonDict = {
        "observedGeneration": pod["metadata"].get("generation", 1),
        "phase": {Stage.SUCCEEDED: "Succeeded", Stage.FAILED: "Failed"}.get(stage, "Running"),
        "conditions": pod_conditions(status, stage, [str(c.get("name")) for c in containers], when.now),
        "hostIP": when.node_ip, "hostIPs": [{"ip": when.node_ip}],
        "podIP": when.pod_ip, "podIPs": [{"ip": when.pod_ip}],
        "startTime": start,
        "qosClass": status.get("qosClass", "BestEffort"),
    }
    inits = [c for c in spec.get("initContainers") or [] if isinstance(c, dict)]
    if inits:
        fresh["initContainerStatuses"] = [init_status(pod, c, start) for c in inits]
    fresh["containerStatuses"] = [container_status(pod, c, stage, when, start) for c in containers]
    return fresh


# --- the status of a pod whose containers really run (the process runtime) -------------------------------------

WAITING_FIRST = ("ContainerCreating", "PodInitializing", "CreateContainerConfigError", "CreateContainerError")


def phase_of(policy: str, inits: Sequence[ContainerState], mains: Sequence[ContainerState]) -> str:
    """The pod's phase from its containers' states, as the kubelet derives it."""
    if policy == "Never" and any(i.terminated is not None and i.terminated.code != 0 for i in inits):
        return "Failed"
    if not all(i.succeeded for i in inits):
        return "Pending"
    if all(m.waiting is not None and m.waiting[0] in WAITING_FIRST and m.last is None for m in mains):
        return "Pending"
    ended = [m.terminated for m in mains]
    if all(e is not None for e in ended):
        return "Failed" if any(e is not None and e.code != 0 for e in ended) else "Succeeded"
    return "Running"


def exit_state(ended: Exit) -> JsonDict:
    state: JsonDict = {"exitCode": ended.code, "reason": ended.reason}
    if ended.message:
        state["message"] = ended.message
    return {**state, "startedAt": ended.started_at, "finishedAt": ended.finished_at, "containerID": ended.container_id}


def observed_container(pod: JsonDict, container: JsonDict, state: ContainerState) -> JsonDict:
    """One entry of containerStatuses for a container of the process runtime."""
    image, name = str(container.get("image") or ""), state.name
    entry: JsonDict = {"name": name, "image": image_ref(image), "imageID": image_id(image),
                       "containerID": state.container_id,
                       "ready": bool(state.running_since), "started": bool(state.running_since),
                       "restartCount": state.restarts, "lastState": {}}
    if state.last is not None:
        entry["lastState"] = {"terminated": exit_state(state.last)}
    if state.running_since:
        entry["state"] = {"running": {"startedAt": state.running_since}}
    elif state.terminated is not None:
        entry["state"] = {"terminated": exit_state(state.terminated)}
    else:
        reason, message = state.waiting or ("ContainerCreating", "")
        entry["state"] = {"waiting": {"reason": reason, **({"message": message} if message else {})}}
        if state.last is None:
            del entry["containerID"]
    return entry


def observed_status(pod: JsonDict, inits: Sequence[ContainerState], mains: Sequence[ContainerState],
                    when: Placement) -> JsonDict:
    """The whole status of a pod whose containers run as processes."""
    status, spec = dict(pod.get("status") or {}), pod.get("spec") or {}
    phase = phase_of(str(spec.get("restartPolicy") or "Always"), inits, mains)
    ready = phase == "Running" and all(m.running_since for m in mains)
    stage = {"Succeeded": Stage.SUCCEEDED, "Failed": Stage.FAILED}.get(phase, Stage.READY if ready else Stage.STARTING)
    declared = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    specs = {str(c.get("name")): c for c in declared}
    fresh: JsonDict = {
        "observedGeneration": pod["metadata"].get("generation", 1), "phase": phase,
        "conditions": pod_conditions(status, stage, [m.name for m in mains], when.now),
        "hostIP": when.node_ip, "hostIPs": [{"ip": when.node_ip}],
        "podIP": when.pod_ip, "podIPs": [{"ip": when.pod_ip}],
        "startTime": str(status.get("startTime") or when.now), "qosClass": status.get("qosClass", "BestEffort"),
    }
    deadline = next((m.terminated for m in mains if m.terminated and m.terminated.reason == "DeadlineExceeded"), None)
    if phase == "Failed" and deadline is not None:
        fresh.update(reason="DeadlineExceeded", message=f"Pod was active on the node longer than the process "
                                                        f"runtime allows: {deadline.message}")
    if inits:
        fresh["initContainerStatuses"] = [observed_container(pod, specs.get(i.name, {}), i) for i in inits]
    fresh["containerStatuses"] = [observed_container(pod, specs.get(m.name, {}), m) for m in mains]
    return fresh
