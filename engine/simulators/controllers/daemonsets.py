"""The DaemonSet controller: one pod on each node its template fits, replaced one at a time on a new template."""

from __future__ import annotations

from collections.abc import Iterable

from engine.simulators import placement
from engine.simulators.api import DAEMONSET, NODE, POD, Api, JsonDict, ref_of
from engine.simulators.controllers.podsets import availability, is_live, is_ready, min_ready_of, new_pod, owned_pods
from engine.simulators.controllers.workloads import MANAGER, generation_of, keys_for, omit_zero, template_hash
from engine.simulators.runtime import EVERYTHING, Ref

REVISION = "controller-revision-hash"
TEMPLATE_GENERATION = "pod-template-generation"
REQUIRED = ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady")
DAEMON_TOLERATIONS = [
    {"key": f"node.kubernetes.io/{taint}", "operator": "Exists", "effect": effect}
    for taint, effect in (("not-ready", "NoExecute"), ("unreachable", "NoExecute"), ("disk-pressure", "NoSchedule"),
                          ("memory-pressure", "NoSchedule"), ("pid-pressure", "NoSchedule"),
                          ("unschedulable", "NoSchedule"))
]


def target_node(pod: JsonDict) -> str:
    """The node a daemon pod is for: where it runs, or the node its affinity names."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    terms = (((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []
    for term in terms:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("values"):
                return str(field["values"][0])
    return ""


def daemon_tolerations(template_spec: JsonDict) -> list[JsonDict]:
    return [*(template_spec.get("tolerations") or []), *DAEMON_TOLERATIONS]


def daemon_pod(ds: JsonDict, node: str, revision: str) -> JsonDict:
    template_spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
    pin = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
    labels = {REVISION: revision, TEMPLATE_GENERATION: str(generation_of(ds))}
    return new_pod(DAEMONSET, ds, generate_name=f"{ds['metadata']['name']}-", labels=labels, spec={
        "affinity": {**(template_spec.get("affinity") or {}),
                     "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": pin}},
        "tolerations": daemon_tolerations(template_spec)})


def revision_label(pod: JsonDict) -> str:
    return str((pod["metadata"].get("labels") or {}).get(REVISION) or "")


def daemonset_status(ds: JsonDict, desired: int, pods: list[JsonDict], fitting: set[str], revision: str,
                     available: int) -> JsonDict:
    placed = [p for p in pods if target_node(p) in fitting]
    ready = sum(1 for p in placed if is_ready(p))
    return omit_zero({
        "currentNumberScheduled": len(placed), "numberMisscheduled": len(pods) - len(placed),
        "desiredNumberScheduled": desired, "numberReady": ready, "observedGeneration": generation_of(ds),
        "updatedNumberScheduled": sum(1 for p in placed if revision_label(p) == revision),
        "numberAvailable": available, "numberUnavailable": max(0, desired - available),
    }, keep=REQUIRED)


class DaemonSetController:
    name = "daemonsets"

    def __init__(self, api: Api) -> None:
        self._api = api

    def refs_for(self, event: str, obj: JsonDict) -> Iterable[Ref]:
        if NODE.describes(obj):
            yield "", EVERYTHING
        yield from keys_for(obj, DAEMONSET, POD)

    def expand(self, marker: str) -> Iterable[Ref]:
        return [ref_of(d) for d in self._api.objects(DAEMONSET)] if marker == EVERYTHING else []

    def reconcile(self, namespace: str, name: str) -> float | None:
        ds = self._api.get(DAEMONSET, namespace, name)
        if ds is None or ds["metadata"].get("deletionTimestamp"):
            return None
        template_spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
        spec = {**template_spec, "tolerations": daemon_tolerations(template_spec)}
        fitting = {placement.name_of(n) for n in placement.fitting(spec, self._api.objects(NODE))}
        revision = template_hash((ds.get("spec") or {}).get("template") or {})
        pods = [p for p in owned_pods(self._api, ds) if is_live(p)]
        pods = self._remove_misplaced(pods, fitting)
        covered = {target_node(p) for p in pods}
        for node in sorted(fitting - covered):
            pods.append(self._api.create(POD, daemon_pod(ds, node, revision), MANAGER))
        pods = self._replace_one_outdated(ds, pods, revision)
        available, wait = availability(pods, min_ready_of(ds))
        self._api.write_status(DAEMONSET, ds, daemonset_status(ds, len(fitting), pods, fitting, revision, available),
                               MANAGER)
        return wait

    def _remove_misplaced(self, pods: list[JsonDict], fitting: set[str]) -> list[JsonDict]:
        """Delete pods on nodes the template no longer fits, and duplicates on one node."""
        kept: dict[str, JsonDict] = {}
        for pod in pods:
            node = target_node(pod)
            if node in fitting and node not in kept:
                kept[node] = pod
            else:
                self._api.delete(POD, *ref_of(pod), uid=str(pod["metadata"]["uid"]))
        return list(kept.values())

    def _replace_one_outdated(self, ds: JsonDict, pods: list[JsonDict], revision: str) -> list[JsonDict]:
        """RollingUpdate with maxUnavailable 1: delete one outdated pod once all are ready (it is recreated)."""
        strategy = ((ds.get("spec") or {}).get("updateStrategy") or {}).get("type", "RollingUpdate")
        outdated = [p for p in pods if revision_label(p) != revision]
        if strategy != "RollingUpdate" or not outdated or not all(is_ready(p) for p in pods):
            return pods
        victim = outdated[0]
        self._api.delete(POD, *ref_of(victim), uid=str(victim["metadata"]["uid"]))
        return [p for p in pods if p is not victim]
