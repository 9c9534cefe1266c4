"""The scheduler and the kubelet for Pods: bind to a fitting node, run, become ready, and end after their duration."""

from __future__ import annotations

from collections.abc import Iterable

from engine.simulators import events, placement, steering
from engine.simulators.api import NODE, POD, Api, JsonDict, ref_of
from engine.simulators.conditions import timestamp
from engine.simulators.kubelet.containerlogs import LogStore, container_id
from engine.simulators.kubelet.nodes import internal_ip
from engine.simulators.kubelet.podruns import ProcessRuntime, host_environment
from engine.simulators.kubelet.podstatus import (
    Placement,
    Stage,
    observed_status,
    pod_status,
    unschedulable_status,
)
from engine.simulators.runtime import EVERYTHING, Ref, Stopwatch

SCHEDULER = "kube-scheduler"
KUBELET = "kubelet"
PENDING = "*pending"  # resync marker: every Pending pod (a node appeared or changed)
ORPHANS = "*orphans"  # resync marker: every pod bound to a node that is gone
TERMINAL = ("Succeeded", "Failed")
STOP_RECHECK = 0.5  # seconds between looks at a deleted pod whose processes are still stopping
ENDED = (Stage.SUCCEEDED, Stage.FAILED, Stage.CRASHING)  # the simulated containers' run is over


def grace_of(pod: JsonDict) -> float:
    """Seconds the containers of a deleted pod get between SIGTERM and SIGKILL (what its deletion says)."""
    meta, spec = pod["metadata"], pod.get("spec") or {}
    value = meta.get("deletionGracePeriodSeconds", spec.get("terminationGracePeriodSeconds", 30))
    return float(value) if isinstance(value, int | float) else 30.0


def stage_after(pod: JsonDict, remaining: float) -> Stage:
    """Where the containers are once `remaining` seconds of the pod's duration are left."""
    always = (pod.get("spec") or {}).get("restartPolicy", "Always") == "Always"
    if always:
        if remaining > 0:
            return Stage.STARTING
        return Stage.CRASHING if steering.fails(pod) else Stage.READY
    if remaining > 0:
        return Stage.READY
    return Stage.FAILED if steering.fails(pod) else Stage.SUCCEEDED


class PodController:
    """Schedules pending pods onto fitting nodes (unless a real scheduler does) and plays the kubelet for bound ones."""

    name = "pods"

    def __init__(self, api: Api, logs: LogStore, *, schedule: bool = True,
                 runtime: ProcessRuntime | None = None) -> None:
        self._api = api
        self._logs = logs  # what the simulated containers print (the process runtime writes its own there)
        self._scheduling = schedule  # False where a real kube-scheduler binds pods
        self._runtime = runtime  # runs the containers as processes; None: their lives are simulated
        self._uids: dict[Ref, str] = {}  # the pod each key last named, for the runtime to forget
        self._clock = Stopwatch()
        self._allocated = 0  # pod IPs handed out so far
        self._unschedulable: dict[Ref, str] = {}  # last FailedScheduling message recorded per pod

    def refs_for(self, event: str, obj: JsonDict) -> Iterable[Ref]:
        if POD.describes(obj):
            yield ref_of(obj)
        elif NODE.describes(obj):
            yield "", ORPHANS if event == "DELETED" else PENDING

    def expand(self, marker: str) -> Iterable[Ref]:
        if marker == ORPHANS:
            return [ref_of(p) for p in self._api.objects(POD)
                    if (p.get("spec") or {}).get("nodeName") and self._api.get(NODE, "", p["spec"]["nodeName"]) is None]
        if marker == PENDING:
            return [ref_of(p) for p in self._api.objects(POD) if (p.get("status") or {}).get("phase") == "Pending"]
        return [ref_of(p) for p in self._api.objects(POD)] if marker == EVERYTHING else []

    def reconcile(self, namespace: str, name: str) -> float | None:
        pod = self._api.get(POD, namespace, name)
        if pod is None:
            self._clock.forget((namespace, name))
            self._unschedulable.pop((namespace, name), None)
            uid = self._uids.pop((namespace, name), None)
            if uid is not None:
                self._forget(uid)
            return None
        uid = str(pod["metadata"].get("uid") or "")
        if self._uids.setdefault((namespace, name), uid) != uid:
            self._forget(self._uids[(namespace, name)])  # a pod of the same name replaced it
            self._uids[(namespace, name)] = uid
        if pod["metadata"].get("deletionTimestamp"):
            return self._confirm_deletion(pod)
        spec = pod.get("spec") or {}
        if (pod.get("status") or {}).get("phase") in TERMINAL:
            return None
        if not spec.get("nodeName"):
            if not self._scheduling or spec.get("schedulerName", "default-scheduler") != "default-scheduler":
                return None
            return self._schedule(pod)
        return self._run(pod)

    def _forget(self, uid: str) -> None:
        if self._runtime is not None:
            self._runtime.forget(uid)
        self._logs.forget(uid)

    def _confirm_deletion(self, pod: JsonDict) -> float | None:
        """The kubelet stops the containers and deletes the pod for good (grace period 0)."""
        if self._runtime is not None and not self._runtime.stop(str(pod["metadata"].get("uid") or ""),
                                                                 grace_of(pod)):
            return STOP_RECHECK
        if pod["metadata"].get("deletionGracePeriodSeconds") != 0:
            namespace, name = ref_of(pod)
            self._api.delete(POD, namespace, name, grace_seconds=0, uid=str(pod["metadata"].get("uid") or ""))
        return None

    def _schedule(self, pod: JsonDict) -> float | None:
        nodes = self._api.objects(NODE)
        spec = pod.get("spec") or {}
        namespace, name = ref_of(pod)
        node = placement.choose(spec, nodes, name)
        if node is None:
            message = placement.unschedulable_message(spec, nodes)
            self._api.write_status(POD, pod, unschedulable_status(pod, message, timestamp()), SCHEDULER)
            if self._unschedulable.get((namespace, name)) != message:
                self._unschedulable[(namespace, name)] = message
                events.record(self._api, pod, events.WARNING, "FailedScheduling", message, "default-scheduler")
            return None
        node_name = placement.name_of(node)
        bound = self._api.patch(POD, namespace, name, {"metadata": {"resourceVersion": pod["metadata"][
            "resourceVersion"]}, "spec": {"nodeName": node_name}}, SCHEDULER)
        events.record(self._api, bound, events.NORMAL, "Scheduled",
                      f"Successfully assigned {namespace}/{name} to {node_name}", "default-scheduler")
        self._unschedulable.pop((namespace, name), None)
        return self._run(bound, node)

    def _run(self, pod: JsonDict, node: JsonDict | None = None) -> float | None:
        node = node or self._api.get(NODE, "", str(pod["spec"]["nodeName"]))
        if node is None:
            if (pod.get("status") or {}).get("startTime"):  # its node went away: the pod garbage collector
                self._api.delete(POD, *ref_of(pod), grace_seconds=0, uid=str(pod["metadata"].get("uid") or ""))
            return None  # no kubelet on a node that does not exist (yet): the pod stays Pending
        if self._runtime is not None:
            return self._run_processes(pod, node)
        ref, uid = ref_of(pod), str(pod["metadata"].get("uid") or "")
        remaining = self._clock.remaining(ref, uid, steering.duration_of(pod))
        stage = stage_after(pod, remaining)
        when = Placement(internal_ip(node), self._pod_ip(pod), timestamp())
        self._print(pod, stage)
        self._api.write_status(POD, pod, pod_status(pod, stage, when), KUBELET)
        return remaining if remaining > 0 else None

    def _print(self, pod: JsonDict, stage: Stage) -> None:
        """The simulated containers' logs: opened with what they print as they start, closed when they end."""
        spec, uid = pod.get("spec") or {}, str(pod["metadata"].get("uid") or "")
        inits = [(c, True) for c in spec.get("initContainers") or [] if isinstance(c, dict)]
        for container, done in [*inits, *((c, stage in ENDED) for c in spec.get("containers") or [])]:
            name = str(container.get("name") or "")
            cid = container_id(uid, name)
            fresh = self._logs.get(cid) is None
            log = self._logs.open(uid, cid)
            if fresh:
                log.write("stdout", steering.output(pod, name).encode())
            if done:
                log.close()

    def _run_processes(self, pod: JsonDict, node: JsonDict) -> float | None:
        """The runtime's containers: started or restarted as needed, their states written as the pod's status."""
        assert self._runtime is not None
        when = Placement(internal_ip(node), self._pod_ip(pod), timestamp())
        addresses = {"hostIP": when.node_ip, "hostIPs": [{"ip": when.node_ip}], "podIP": when.pod_ip,
                     "podIPs": [{"ip": when.pod_ip}]}
        placed = {**pod, "status": {**(pod.get("status") or {}), **addresses}}
        seen = self._runtime.sync(placed, host_environment(pod))
        self._api.write_status(POD, pod, observed_status(pod, seen.init, seen.main, when), KUBELET)
        return seen.recheck

    def _pod_ip(self, pod: JsonDict) -> str:
        current = (pod.get("status") or {}).get("podIP")
        if current:
            return str(current)
        n, self._allocated = self._allocated, self._allocated + 1
        return f"10.{244 + n // 62500 % 12}.{n // 250 % 250}.{n % 250 + 2}"
