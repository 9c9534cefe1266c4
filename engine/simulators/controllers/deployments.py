"""The Deployment controller: one ReplicaSet per pod template, old ones scaled down, status summed from them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from engine.simulators import conditions, events
from engine.simulators.api import DEPLOYMENT, REPLICASET, Api, JsonDict, ref_of
from engine.simulators.controllers.workloads import (
    MANAGER,
    controlled_by,
    desired_replicas,
    generation_of,
    keys_for,
    omit_zero,
    owner_reference,
    template_hash,
)
from engine.simulators.runtime import EVERYTHING, Ref, Stopwatch

HASH_LABEL = "pod-template-hash"
COMPONENT = "deployment-controller"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
NOT_COPIED = ("kubectl.kubernetes.io/last-applied-configuration", REVISION, "deployment.kubernetes.io/revision-history",
              DESIRED, MAX_REPLICAS, "deprecated.deployment.rollback.to")
STAMPS = ("lastUpdateTime",)


def scaled(value: object, replicas: int, *, round_up: bool) -> int:
    """An int-or-percent (maxSurge, maxUnavailable) resolved against the replica count."""
    if isinstance(value, str) and value.endswith("%"):
        share = replicas * int(value[:-1] or 0) / 100
        return math.ceil(share) if round_up else math.floor(share)
    return int(value) if isinstance(value, int) else 0


def surge_and_unavailable(deployment: JsonDict) -> tuple[int, int]:
    spec = deployment.get("spec") or {}
    replicas = desired_replicas(deployment)
    rolling = (spec.get("strategy") or {}).get("rollingUpdate") or {}
    surge = scaled(rolling.get("maxSurge", "25%"), replicas, round_up=True)
    unavailable = scaled(rolling.get("maxUnavailable", "25%"), replicas, round_up=False)
    return surge, 1 if surge == 0 and unavailable == 0 else unavailable


def revision_of(rs: JsonDict) -> int:
    value = ((rs.get("metadata") or {}).get("annotations") or {}).get(REVISION, "0")
    return int(value) if str(value).isdigit() else 0


def new_replicaset(deployment: JsonDict, pod_hash: str, revision: int) -> JsonDict:
    meta, spec = deployment["metadata"], deployment.get("spec") or {}
    template = dict(spec.get("template") or {})
    template_meta = dict(template.get("metadata") or {})
    labels = {**(template_meta.get("labels") or {}), HASH_LABEL: pod_hash}
    template["metadata"] = {**template_meta, "labels": labels}
    selector = dict(spec.get("selector") or {})
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: pod_hash}
    surge, _ = surge_and_unavailable(deployment)
    replicas = desired_replicas(deployment)
    copied = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in NOT_COPIED}
    rs_spec: JsonDict = {"replicas": replicas, "selector": selector, "template": template}
    if spec.get("minReadySeconds"):
        rs_spec["minReadySeconds"] = spec["minReadySeconds"]
    return {
        "metadata": {"name": f"{meta['name']}-{pod_hash}", "namespace": meta.get("namespace"), "labels": labels,
                     "annotations": {**copied, DESIRED: str(replicas), MAX_REPLICAS: str(replicas + surge),
                                     REVISION: str(revision)},
                     "ownerReferences": [owner_reference(DEPLOYMENT, deployment)]},
        "spec": rs_spec,
    }


def count(replicasets: Sequence[JsonDict], field: str) -> int:
    return sum(int((rs.get("status") or {}).get(field) or 0) for rs in replicasets)


def is_complete(deployment: JsonDict, new: JsonDict, replicasets: Sequence[JsonDict]) -> bool:
    replicas = desired_replicas(deployment)
    new_status = new.get("status") or {}
    return (int(new_status.get("replicas") or 0) == replicas == count(replicasets, "replicas")
            and count(replicasets, "availableReplicas") == replicas
            and int(new_status.get("observedGeneration") or 0) >= generation_of(new))


def progressing(old: list[JsonDict], new: JsonDict, *, complete: bool, created: bool, timed_out: bool,
                now: str) -> list[JsonDict]:
    name = new["metadata"]["name"]
    if complete:
        return conditions.put(old, "Progressing", True, "NewReplicaSetAvailable",
                              f'ReplicaSet "{name}" has successfully progressed.', now=now, stamps=STAMPS)
    if timed_out:
        return conditions.put(old, "Progressing", False, "ProgressDeadlineExceeded",
                              f'ReplicaSet "{name}" has timed out progressing.', now=now, stamps=STAMPS)
    current = conditions.find(old, "Progressing") or {}
    if created or (current.get("reason") == "NewReplicaSetCreated" and name in str(current.get("message"))):
        return conditions.put(old, "Progressing", True, "NewReplicaSetCreated", f'Created new replica set "{name}"',
                              now=now, stamps=STAMPS)
    return conditions.put(old, "Progressing", True, "ReplicaSetUpdated", f'ReplicaSet "{name}" is progressing.',
                          now=now, stamps=STAMPS)


def deployment_status(deployment: JsonDict, new: JsonDict, replicasets: Sequence[JsonDict], *, created: bool,
                      timed_out: bool, now: str) -> JsonDict:
    replicas = desired_replicas(deployment)
    available = count(replicasets, "availableReplicas")
    _, max_unavailable = surge_and_unavailable(deployment)
    old = list((deployment.get("status") or {}).get("conditions") or [])
    if available >= replicas - max_unavailable:
        conds = conditions.put(old, "Available", True, "MinimumReplicasAvailable",
                               "Deployment has minimum availability.", now=now, stamps=STAMPS)
    else:
        conds = conditions.put(old, "Available", False, "MinimumReplicasUnavailable",
                               "Deployment does not have minimum availability.", now=now, stamps=STAMPS)
    complete = is_complete(deployment, new, replicasets)
    conds = progressing(conds, new, complete=complete, created=created, timed_out=timed_out and not complete,
                        now=now)
    status = omit_zero({
        "observedGeneration": generation_of(deployment),
        "replicas": count(replicasets, "replicas"),
        "updatedReplicas": int((new.get("status") or {}).get("replicas") or 0),
        "readyReplicas": count(replicasets, "readyReplicas"),
        "availableReplicas": available,
        "unavailableReplicas": max(0, replicas - available),
    })
    return {**status, "conditions": conds}


class DeploymentController:
    name = "deployments"

    def __init__(self, api: Api) -> None:
        self._api = api
        self._clock = Stopwatch()

    def refs_for(self, event: str, obj: JsonDict) -> Iterable[Ref]:
        return keys_for(obj, DEPLOYMENT, REPLICASET)

    def expand(self, marker: str) -> Iterable[Ref]:
        return [ref_of(d) for d in self._api.objects(DEPLOYMENT)] if marker == EVERYTHING else []

    def reconcile(self, namespace: str, name: str) -> float | None:
        deployment = self._api.get(DEPLOYMENT, namespace, name)
        if deployment is None:
            self._clock.forget((namespace, name))
            return None
        if deployment["metadata"].get("deletionTimestamp"):
            return None
        spec, uid = deployment.get("spec") or {}, str(deployment["metadata"]["uid"])
        owned = [rs for rs in self._api.owned_by(REPLICASET, uid) if controlled_by(rs, uid)]
        pod_hash = template_hash(spec.get("template") or {})
        new = next((rs for rs in owned if (rs["metadata"].get("labels") or {}).get(HASH_LABEL) == pod_hash), None)
        olds = [rs for rs in owned if rs is not new]
        created = new is None
        new = self._sync_new(deployment, new, pod_hash, max((revision_of(rs) for rs in olds), default=0))
        if int((new.get("status") or {}).get("availableReplicas") or 0) >= desired_replicas(deployment):
            olds = [self._scale_down(deployment, rs) for rs in olds]
        deadline = float(spec.get("progressDeadlineSeconds") or 600)
        left = self._clock.remaining((namespace, name), (uid, generation_of(deployment), pod_hash), deadline)
        status = deployment_status(deployment, new, [new, *olds], created=created, timed_out=left <= 0,
                                   now=conditions.timestamp())
        self._api.write_status(DEPLOYMENT, deployment, status, MANAGER,
                               annotations={REVISION: str(revision_of(new))})
        return None if is_complete(deployment, new, [new, *olds]) or left <= 0 else left

    def _sync_new(self, deployment: JsonDict, new: JsonDict | None, pod_hash: str, newest_old: int) -> JsonDict:
        """Create the ReplicaSet of the current template, or bring its replicas and revision up to date."""
        replicas = desired_replicas(deployment)
        if new is None:
            created = self._api.create(REPLICASET, new_replicaset(deployment, pod_hash, newest_old + 1), MANAGER)
            self._record_scaling(deployment, created, 0, replicas)
            return created
        surge, _ = surge_and_unavailable(deployment)
        revision = revision_of(new) if revision_of(new) > newest_old else newest_old + 1
        notes = {DESIRED: str(replicas), MAX_REPLICAS: str(replicas + surge), REVISION: str(revision)}
        current = new["metadata"].get("annotations") or {}
        if desired_replicas(new) == replicas and all(current.get(k) == v for k, v in notes.items()):
            return new
        patched = self._api.patch(REPLICASET, *ref_of(new), {
            "metadata": {"annotations": notes, "resourceVersion": new["metadata"]["resourceVersion"]},
            "spec": {"replicas": replicas}}, MANAGER)
        self._record_scaling(deployment, patched, desired_replicas(new), replicas)
        return patched

    def _scale_down(self, deployment: JsonDict, rs: JsonDict) -> JsonDict:
        if desired_replicas(rs) == 0:
            return rs
        patched = self._api.patch(REPLICASET, *ref_of(rs), {
            "metadata": {"resourceVersion": rs["metadata"]["resourceVersion"]}, "spec": {"replicas": 0}}, MANAGER)
        self._record_scaling(deployment, patched, desired_replicas(rs), 0)
        return patched

    def _record_scaling(self, deployment: JsonDict, rs: JsonDict, before: int, after: int) -> None:
        if before != after:
            direction = "up" if after > before else "down"
            events.record(self._api, deployment, events.NORMAL, "ScalingReplicaSet",
                          f"Scaled {direction} replica set {rs['metadata']['name']} from {before} to {after}",
                          COMPONENT)
