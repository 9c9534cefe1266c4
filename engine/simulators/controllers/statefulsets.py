"""The StatefulSet controller: pods `<set>-<ordinal>` in order, their claims, rolling updates from the top ordinal."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping

from engine.simulators.api import POD, PVC, STATEFULSET, Api, Conflict, JsonDict, ref_of
from engine.simulators.controllers.podsets import availability, is_live, is_ready, min_ready_of, new_pod, owned_pods
from engine.simulators.controllers.workloads import (
    MANAGER,
    desired_replicas,
    generation_of,
    keys_for,
    omit_zero,
    owner_reference,
    template_hash,
)
from engine.simulators.runtime import EVERYTHING, Ref

REVISION = "controller-revision-hash"
POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"
REQUIRED = ("replicas", "availableReplicas", "collisionCount")


def revision_of(sts: JsonDict) -> str:
    return f"{sts['metadata']['name']}-{template_hash((sts.get('spec') or {}).get('template') or {})}"


def ordinal_of(sts: JsonDict, pod: JsonDict) -> int | None:
    prefix, name = f"{sts['metadata']['name']}-", pod["metadata"]["name"]
    suffix = name[len(prefix):] if name.startswith(prefix) else ""
    return int(suffix) if suffix.isdigit() else None


def claim_templates(sts: JsonDict) -> list[JsonDict]:
    return [t for t in (sts.get("spec") or {}).get("volumeClaimTemplates") or [] if isinstance(t, dict)]


def claim(sts: JsonDict, template: JsonDict, ordinal: int) -> JsonDict:
    """The PersistentVolumeClaim `<template>-<set>-<ordinal>` that pod `ordinal` mounts."""
    meta, spec = sts["metadata"], sts.get("spec") or {}
    tmeta = template.get("metadata") or {}
    metadata: JsonDict = {"name": f"{tmeta.get('name')}-{meta['name']}-{ordinal}", "namespace": meta.get("namespace"),
                          "labels": {**(tmeta.get("labels") or {}),
                                     **(((spec.get("selector") or {}).get("matchLabels")) or {})}}
    if tmeta.get("annotations"):
        metadata["annotations"] = dict(tmeta["annotations"])
    if (spec.get("persistentVolumeClaimRetentionPolicy") or {}).get("whenDeleted") == "Delete":
        metadata["ownerReferences"] = [owner_reference(STATEFULSET, sts)]
    return {"metadata": metadata, "spec": dict(template.get("spec") or {})}


def set_pod(sts: JsonDict, ordinal: int, revision: str) -> JsonDict:
    name = f"{sts['metadata']['name']}-{ordinal}"
    spec = sts.get("spec") or {}
    template_spec = (spec.get("template") or {}).get("spec") or {}
    volumes = [v for v in template_spec.get("volumes") or [] if isinstance(v, dict)]
    for template in claim_templates(sts):
        volume = str((template.get("metadata") or {}).get("name"))
        if all(v.get("name") != volume for v in volumes):
            claim_name = f"{volume}-{sts['metadata']['name']}-{ordinal}"
            volumes.append({"name": volume, "persistentVolumeClaim": {"claimName": claim_name}})
    extra: JsonDict = {"hostname": name}
    if spec.get("serviceName"):
        extra["subdomain"] = spec["serviceName"]
    if volumes:
        extra["volumes"] = volumes
    labels = {REVISION: revision, POD_NAME: name, POD_INDEX: str(ordinal)}
    return new_pod(STATEFULSET, sts, name=name, labels=labels, spec=extra)


def statefulset_status(sts: JsonDict, pods: list[JsonDict], revision: str, available: int) -> JsonDict:
    """Counts from the pods; currentRevision moves to the update revision once every replica is updated and ready."""
    old = sts.get("status") or {}
    replicas, ready = len(pods), sum(1 for p in pods if is_ready(p))
    current = str(old.get("currentRevision") or revision)
    updated = sum(1 for p in pods if (p["metadata"].get("labels") or {}).get(REVISION) == revision)
    if updated == replicas == ready == desired_replicas(sts):
        current = revision
    at_current = sum(1 for p in pods if (p["metadata"].get("labels") or {}).get(REVISION) == current)
    return omit_zero({
        "observedGeneration": generation_of(sts), "replicas": replicas, "readyReplicas": ready,
        "currentReplicas": at_current, "updatedReplicas": updated, "availableReplicas": available,
        "currentRevision": current, "updateRevision": revision, "collisionCount": 0,
    }, keep=REQUIRED)


def stale_ordinal(sts: JsonDict, pods: Mapping[int, JsonDict], revision: str) -> int | None:
    """The pod a rolling update replaces next: the highest outdated ordinal at or above the partition, once every
    pod is ready."""
    spec = sts.get("spec") or {}
    strategy = spec.get("updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return None
    if len(pods) < desired_replicas(sts) or not all(is_live(p) and is_ready(p) for p in pods.values()):
        return None
    partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
    stale = [i for i, p in pods.items() if i >= partition and (p["metadata"].get("labels") or {}).get(
        REVISION) != revision]
    return max(stale, default=None)


class StatefulSetController:
    name = "statefulsets"

    def __init__(self, api: Api) -> None:
        self._api = api

    def refs_for(self, event: str, obj: JsonDict) -> Iterable[Ref]:
        return keys_for(obj, STATEFULSET, POD)

    def expand(self, marker: str) -> Iterable[Ref]:
        return [ref_of(s) for s in self._api.objects(STATEFULSET)] if marker == EVERYTHING else []

    def reconcile(self, namespace: str, name: str) -> float | None:
        sts = self._api.get(STATEFULSET, namespace, name)
        if sts is None or sts["metadata"].get("deletionTimestamp"):
            return None
        revision = revision_of(sts)
        pods = {i: p for p in owned_pods(self._api, sts) if (i := ordinal_of(sts, p)) is not None}
        self._create_claims(sts)
        self._create_or_remove(sts, pods, revision)
        stale = stale_ordinal(sts, pods, revision)
        if stale is not None:
            self._delete(pods.pop(stale))
        live = [p for p in pods.values() if is_live(p)]
        available, wait = availability(live, min_ready_of(sts))
        self._api.write_status(STATEFULSET, sts, statefulset_status(sts, live, revision, available), MANAGER)
        return wait

    def _create_or_remove(self, sts: JsonDict, pods: dict[int, JsonDict], revision: str) -> None:
        """Create missing ordinals below spec.replicas (OrderedReady: one at a time, after the previous is
        ready) and remove those above it (OrderedReady: the highest first, one at a time)."""
        parallel = (sts.get("spec") or {}).get("podManagementPolicy") == "Parallel"
        wanted = desired_replicas(sts)
        for ordinal in range(wanted):
            if ordinal in pods:
                if not parallel and not (is_live(pods[ordinal]) and is_ready(pods[ordinal])):
                    return
                continue
            pods[ordinal] = self._api.create(POD, set_pod(sts, ordinal, revision), MANAGER)
            if not parallel:
                return
        extra = sorted((i for i in pods if i >= wanted), reverse=True)
        for ordinal in extra if parallel else extra[:1]:
            self._delete(pods.pop(ordinal))

    def _delete(self, pod: JsonDict) -> None:
        if not pod["metadata"].get("deletionTimestamp"):
            self._api.delete(POD, *ref_of(pod), uid=str(pod["metadata"]["uid"]))

    def _create_claims(self, sts: JsonDict) -> None:
        for template in claim_templates(sts):
            for ordinal in range(desired_replicas(sts)):
                wanted = claim(sts, template, ordinal)
                if self._api.get(PVC, *ref_of(wanted)) is None:
                    with contextlib.suppress(Conflict):
                        self._api.create(PVC, wanted, MANAGER)
