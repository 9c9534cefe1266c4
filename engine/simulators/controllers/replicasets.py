"""The ReplicaSet controller (and the ReplicationController one, its older twin): keeps spec.replicas pods from the
template and counts the ready and available ones."""

from __future__ import annotations

from collections.abc import Iterable

from engine.simulators import events
from engine.simulators.api import POD, REPLICASET, Api, JsonDict, Kind, ref_of
from engine.simulators.controllers.podsets import (
    availability,
    is_live,
    is_ready,
    min_ready_of,
    new_pod,
    owned_pods,
    removal_order,
)
from engine.simulators.controllers.workloads import MANAGER, desired_replicas, generation_of, keys_for, omit_zero
from engine.simulators.runtime import EVERYTHING, Ref


def replicaset_status(rs: JsonDict, pods: list[JsonDict], available: int) -> JsonDict:
    labels = (((rs.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}
    labelled = sum(1 for p in pods if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in labels.items()))
    return omit_zero({"replicas": len(pods), "fullyLabeledReplicas": labelled,
                      "readyReplicas": sum(1 for p in pods if is_ready(p)), "availableReplicas": available,
                      "observedGeneration": generation_of(rs)}, keep=("replicas",))


class ReplicaSetController:
    def __init__(self, api: Api, kind: Kind = REPLICASET) -> None:
        self._api = api
        self._kind = kind
        self.name = kind.plural
        self._component = "replicaset-controller" if kind == REPLICASET else "replication-controller"

    def refs_for(self, event: str, obj: JsonDict) -> Iterable[Ref]:
        return keys_for(obj, self._kind, POD)

    def expand(self, marker: str) -> Iterable[Ref]:
        return [ref_of(rs) for rs in self._api.objects(self._kind)] if marker == EVERYTHING else []

    def reconcile(self, namespace: str, name: str) -> float | None:
        rs = self._api.get(self._kind, namespace, name)
        if rs is None or rs["metadata"].get("deletionTimestamp"):
            return None
        pods = [p for p in owned_pods(self._api, rs) if is_live(p)]
        wanted = desired_replicas(rs)
        for _ in range(wanted - len(pods)):
            pods.append(self._api.create(POD, new_pod(self._kind, rs, generate_name=f"{name}-"), MANAGER))
            self._record(rs, "SuccessfulCreate", f"Created pod: {pods[-1]['metadata']['name']}")
        for pod in removal_order(pods)[:max(0, len(pods) - wanted)]:
            self._api.delete(POD, namespace, pod["metadata"]["name"], uid=pod["metadata"]["uid"])
            pods.remove(pod)
            self._record(rs, "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}")
        available, wait = availability(pods, min_ready_of(rs))
        self._api.write_status(self._kind, rs, replicaset_status(rs, pods, available), MANAGER)
        return wait

    def _record(self, owner: JsonDict, reason: str, message: str) -> None:
        events.record(self._api, owner, events.NORMAL, reason, message, self._component)
