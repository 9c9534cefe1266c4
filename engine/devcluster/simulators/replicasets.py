"""The ReplicaSet controller, without pods: replicas exist at once and become ready after the simulated duration."""

from __future__ import annotations

from collections.abc import Iterable

from engine.devcluster.simulators import steering
from engine.devcluster.simulators.api import REPLICASET, Api, JsonDict
from engine.devcluster.simulators.runtime import EVERYTHING, Ref, Stopwatch
from engine.devcluster.simulators.workloads import MANAGER, desired_replicas, generation_of, omit_zero, ref_of


def replicaset_status(rs: JsonDict, ready: int) -> JsonDict:
    replicas = desired_replicas(rs)
    return omit_zero({"replicas": replicas, "fullyLabeledReplicas": replicas, "readyReplicas": ready,
                      "availableReplicas": ready, "observedGeneration": generation_of(rs)}, keep=("replicas",))


class ReplicaSetController:
    name = "replicasets"

    def __init__(self, api: Api) -> None:
        self._api = api
        self._clock = Stopwatch()

    def refs_for(self, event: str, obj: JsonDict) -> Iterable[Ref]:
        if REPLICASET.describes(obj):
            yield ref_of(obj)

    def expand(self, marker: str) -> Iterable[Ref]:
        return [ref_of(rs) for rs in self._api.objects(REPLICASET)] if marker == EVERYTHING else []

    def reconcile(self, namespace: str, name: str) -> float | None:
        rs = self._api.get(REPLICASET, namespace, name)
        if rs is None:
            self._clock.forget((namespace, name))
            return None
        if rs["metadata"].get("deletionTimestamp"):
            return None
        token = (rs["metadata"].get("uid"), generation_of(rs))
        remaining = self._clock.remaining((namespace, name), token, steering.duration_of(rs))
        replicas = desired_replicas(rs)
        if steering.fails(rs) or remaining > 0:
            ready = min(int((rs.get("status") or {}).get("readyReplicas") or 0), replicas)
        else:
            ready = replicas
        self._api.write_status(REPLICASET, rs, replicaset_status(rs, ready), MANAGER)
        return remaining or None
