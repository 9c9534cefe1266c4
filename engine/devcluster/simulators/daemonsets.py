"""The DaemonSet controller, without pods: one replica per node its pod template fits."""

from __future__ import annotations

from collections.abc import Iterable

from engine.devcluster.simulators import placement, steering
from engine.devcluster.simulators.api import DAEMONSET, NODE, Api, JsonDict
from engine.devcluster.simulators.runtime import EVERYTHING, Ref, Stopwatch
from engine.devcluster.simulators.workloads import MANAGER, generation_of, omit_zero, ref_of

REQUIRED = ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady")


def daemonset_status(ds: JsonDict, desired: int, ready: int) -> JsonDict:
    return omit_zero({
        "currentNumberScheduled": desired, "numberMisscheduled": 0, "desiredNumberScheduled": desired,
        "numberReady": ready, "observedGeneration": generation_of(ds), "updatedNumberScheduled": desired,
        "numberAvailable": ready, "numberUnavailable": desired - ready,
    }, keep=REQUIRED)


class DaemonSetController:
    name = "daemonsets"

    def __init__(self, api: Api) -> None:
        self._api = api
        self._clock = Stopwatch()

    def refs_for(self, event: str, obj: JsonDict) -> Iterable[Ref]:
        if DAEMONSET.describes(obj):
            yield ref_of(obj)
        elif NODE.describes(obj):
            yield "", EVERYTHING

    def expand(self, marker: str) -> Iterable[Ref]:
        return [ref_of(d) for d in self._api.objects(DAEMONSET)] if marker == EVERYTHING else []

    def reconcile(self, namespace: str, name: str) -> float | None:
        ds = self._api.get(DAEMONSET, namespace, name)
        if ds is None:
            self._clock.forget((namespace, name))
            return None
        if ds["metadata"].get("deletionTimestamp"):
            return None
        pod_spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
        desired = len(placement.fitting(pod_spec, self._api.objects(NODE), daemon=True))
        token = (ds["metadata"].get("uid"), generation_of(ds), desired)
        remaining = self._clock.remaining((namespace, name), token, steering.duration_of(ds))
        if steering.fails(ds) or remaining > 0:
            ready = min(int((ds.get("status") or {}).get("numberReady") or 0), desired)
        else:
            ready = desired
        self._api.write_status(DAEMONSET, ds, daemonset_status(ds, desired, ready), MANAGER)
        return remaining or None
