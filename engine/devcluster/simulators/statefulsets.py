"""The StatefulSet controller, without pods: revisions, replica counts, and the claims of volumeClaimTemplates."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from engine.devcluster.simulators import steering
from engine.devcluster.simulators.api import PVC, STATEFULSET, Api, Conflict, JsonDict
from engine.devcluster.simulators.runtime import EVERYTHING, Ref, Stopwatch
from engine.devcluster.simulators.workloads import (
    MANAGER,
    desired_replicas,
    generation_of,
    omit_zero,
    owner_reference,
    ref_of,
    template_hash,
)

REQUIRED = ("replicas", "availableReplicas", "collisionCount")


def statefulset_status(sts: JsonDict, revision: str, *, done: bool) -> JsonDict:
    """Done: every replica ready at `revision`; otherwise rolling to it with the ready replicas kept so far."""
    replicas = desired_replicas(sts)
    old = sts.get("status") or {}
    current = str(old.get("currentRevision") or revision)
    if done:
        ready, updated, current = replicas, replicas, revision
    else:
        ready = min(int(old.get("readyReplicas") or 0), replicas) if old.get("updateRevision") else 0
        updated = replicas if current == revision else 0
    return omit_zero({
        "observedGeneration": generation_of(sts), "replicas": replicas, "readyReplicas": ready,
        "currentReplicas": replicas if current == revision else replicas - updated, "updatedReplicas": updated,
        "availableReplicas": ready, "currentRevision": current, "updateRevision": revision, "collisionCount": 0,
    }, keep=REQUIRED)


def claims(sts: JsonDict) -> list[JsonDict]:
    """The PersistentVolumeClaims `<template>-<set>-<ordinal>` the set's pods would mount."""
    meta, spec = sts["metadata"], sts.get("spec") or {}
    labels = dict(((spec.get("selector") or {}).get("matchLabels")) or {})
    owned = ((spec.get("persistentVolumeClaimRetentionPolicy") or {}).get("whenDeleted") == "Delete")
    found = []
    for template in spec.get("volumeClaimTemplates") or []:
        tmeta = template.get("metadata") or {}
        for ordinal in range(desired_replicas(sts)):
            metadata: JsonDict = {"name": f"{tmeta.get('name')}-{meta['name']}-{ordinal}",
                                  "namespace": meta.get("namespace"),
                                  "labels": {**(tmeta.get("labels") or {}), **labels}}
            if tmeta.get("annotations"):
                metadata["annotations"] = dict(tmeta["annotations"])
            if owned:
                metadata["ownerReferences"] = [owner_reference(STATEFULSET, sts)]
            found.append({"metadata": metadata, "spec": dict(template.get("spec") or {})})
    return found


class StatefulSetController:
    name = "statefulsets"

    def __init__(self, api: Api) -> None:
        self._api = api
        self._clock = Stopwatch()

    def refs_for(self, event: str, obj: JsonDict) -> Iterable[Ref]:
        if STATEFULSET.describes(obj):
            yield ref_of(obj)

    def expand(self, marker: str) -> Iterable[Ref]:
        return [ref_of(s) for s in self._api.objects(STATEFULSET)] if marker == EVERYTHING else []

    def reconcile(self, namespace: str, name: str) -> float | None:
        sts = self._api.get(STATEFULSET, namespace, name)
        if sts is None:
            self._clock.forget((namespace, name))
            return None
        if sts["metadata"].get("deletionTimestamp"):
            return None
        self._create_claims(sts)
        revision = f"{name}-{template_hash((sts.get('spec') or {}).get('template') or {})}"
        token = (sts["metadata"].get("uid"), generation_of(sts))
        remaining = self._clock.remaining((namespace, name), token, steering.duration_of(sts))
        done = remaining == 0 and not steering.fails(sts)
        self._api.write_status(STATEFULSET, sts, statefulset_status(sts, revision, done=done), MANAGER)
        return remaining or None

    def _create_claims(self, sts: JsonDict) -> None:
        for claim in claims(sts):
            if self._api.get(PVC, *ref_of(claim)) is None:
                with contextlib.suppress(Conflict):
                    self._api.create(PVC, claim, MANAGER)
