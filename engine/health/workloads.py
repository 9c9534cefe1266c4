"""Health of workload controllers: Deployment, StatefulSet, DaemonSet and ReplicaSet."""

from __future__ import annotations

from engine.health.objects import EMPTY, Obj, as_map, conditions_of, explain, int_field, plural, spec_of, status_of
from engine.health.verdicts import Status, failed, healthy, progressing, stale


def deployment(obj: Obj) -> Status:
    if waiting := stale(obj, strict=True):
        return waiting
    progress = conditions_of(obj).get("Progressing", EMPTY)
    if progress.get("status") == "False" and progress.get("reason") == "ProgressDeadlineExceeded":
        return failed(obj, explain(progress))
    spec, status = spec_of(obj), status_of(obj)
    want = int_field(spec, "replicas", 1)
    replicas, updated, available = (int_field(status, k) for k in ("replicas", "updatedReplicas", "availableReplicas"))
    if updated < want:
        return progressing(obj, f"{updated}/{want} replicas updated")
    if replicas > want:
        return progressing(obj, f"{plural(replicas - want, 'old replica')} pending termination")
    if available < want:
        return progressing(obj, f"{available}/{want} replicas available")
    return healthy(obj, f"{available}/{want} replicas available")


def statefulset(obj: Obj) -> Status:
    if waiting := stale(obj, strict=True):
        return waiting
    spec, status = spec_of(obj), status_of(obj)
    want, ready = int_field(spec, "replicas", 1), int_field(status, "readyReplicas")
    replicas = int_field(status, "replicas")
    if ready < want:
        return progressing(obj, f"{ready}/{want} replicas ready")
    if replicas > want:
        return progressing(obj, f"{plural(replicas - want, 'old replica')} pending termination")
    if rollout := statefulset_rollout(obj, want):
        return progressing(obj, rollout)
    return healthy(obj, f"{ready}/{want} replicas ready")


def statefulset_rollout(obj: Obj, want: int) -> str:
    """What a StatefulSet's rolling update still has to do ("" when done or not rolling)."""
    strategy, status = as_map(spec_of(obj).get("updateStrategy")), status_of(obj)
    if strategy.get("type") == "OnDelete":
        return ""
    updated = int_field(status, "updatedReplicas")
    partition = int_field(as_map(strategy.get("rollingUpdate")), "partition")
    if partition > 0:
        target = max(want - partition, 0)
        return f"{updated}/{target} replicas updated (partition {partition})" if updated < target else ""
    revision = status.get("updateRevision")
    if status.get("currentRevision") != revision:
        return f"{updated}/{want} replicas updated to revision {revision}"
    return ""


def daemonset(obj: Obj) -> Status:
    if waiting := stale(obj, strict=True):
        return waiting
    status = status_of(obj)
    desired, updated = int_field(status, "desiredNumberScheduled"), int_field(status, "updatedNumberScheduled")
    available = int_field(status, "numberAvailable")
    on_delete = as_map(spec_of(obj).get("updateStrategy")).get("type") == "OnDelete"
    if updated < desired and not on_delete:
        return progressing(obj, f"{updated}/{desired} pods updated")
    if available < desired:
        return progressing(obj, f"{available}/{desired} pods available")
    return healthy(obj, f"{available}/{desired} pods available")


def replicaset(obj: Obj) -> Status:
    if waiting := stale(obj, strict=True):
        return waiting
    failure = conditions_of(obj).get("ReplicaFailure", EMPTY)
    if failure.get("status") == "True":
        return progressing(obj, explain(failure, "ReplicaFailure"))
    want, status = int_field(spec_of(obj), "replicas", 1), status_of(obj)
    available, replicas = int_field(status, "availableReplicas"), int_field(status, "replicas")
    if available < want:
        return progressing(obj, f"{available}/{want} replicas available")
    if replicas > want:
        return progressing(obj, f"{plural(replicas - want, 'extra replica')} pending termination")
    return healthy(obj, f"{available}/{want} replicas available")
