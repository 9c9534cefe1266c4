"""Which Instance keys the manager queues for a watch event on an object (InstanceKeys): the Instance itself,
the Instances of an OperatorVersion, the owner of an object, its instance label and namespace annotation, or the
Instance of the Job that controls a pod."""

from __future__ import annotations

from typing import Any

from engine.controller import InstanceKeys

API = "kplan.dev/v1alpha1"


def instance(name: str, namespace: str = "shop", version: str = "redis-0.1.0", ran: str | None = None,
             owner: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": API, "kind": "Instance", "name": owner, "uid": "u"}]
    status = {"lastRun": {"operatorVersion": ran}} if ran else {}
    return {"apiVersion": API, "kind": "Instance", "metadata": meta,
            "spec": {"operatorVersion": {"name": version}}, "status": status}


def keys_with(*instances: dict[str, Any]) -> InstanceKeys:
    return InstanceKeys(lambda namespace: [i for i in instances if i["metadata"]["namespace"] == namespace])


def test_an_instance_maps_to_itself() -> None:
    assert keys_with()(instance("cache")) == {"shop/cache"}


def test_a_child_instance_maps_to_itself_and_its_parent() -> None:
    assert keys_with()(instance("cache-redis", owner="cache")) == {"shop/cache-redis", "shop/cache"}


def test_an_operator_version_maps_to_the_instances_that_run_it_or_ran_it_last() -> None:
    keys = keys_with(
        instance("a"), instance("b", version="redis-0.2.0", ran="redis-0.1.0"), instance("c", version="redis-0.2.0"),
        instance("d", namespace="other"),
    )
    version = {"apiVersion": API, "kind": "OperatorVersion", "metadata": {"name": "redis-0.1.0", "namespace": "shop"}}

    assert keys(version) == {"shop/a", "shop/b"}


def test_an_owned_object_maps_to_its_owner() -> None:
    owned = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "cache-config", "namespace": "shop", "labels": {"kplan.dev/instance": "cache"},
        "ownerReferences": [{"apiVersion": API, "kind": "Instance", "name": "cache", "uid": "u"}]}}

    assert keys_with()(owned) == {"shop/cache"}


def test_a_cluster_scoped_object_maps_by_label_and_namespace_annotation() -> None:
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {
        "name": "shop-cache-reader", "labels": {"kplan.dev/instance": "cache"},
        "annotations": {"kplan.dev/instance-namespace": "shop"}}}

    assert keys_with()(role) == {"shop/cache"}


def test_a_labelled_object_without_annotation_maps_to_its_own_namespace() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop",
                                                           "labels": {"kplan.dev/instance": "cache"}}}

    assert keys_with()(pod) == {"shop/cache"}


def test_objects_that_are_not_kplans_map_to_nothing() -> None:
    foreign_owner = {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "p", "namespace": "shop",
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": "u"}]}}
    unlabelled_cluster_object = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}

    assert keys_with()(foreign_owner) == set()
    assert keys_with()(unlabelled_cluster_object) == set()


def job_pod(job: str = "train") -> dict[str, Any]:
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": job, "uid": "j", "controller": True}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{job}-x7k2p", "namespace": "shop", "ownerReferences": [owner]}}


def test_an_unlabelled_pod_of_a_job_maps_to_the_instance_of_its_job() -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "shop",
           "ownerReferences": [{"apiVersion": API, "kind": "Instance", "name": "wf", "uid": "u"}]}}
    cached = {("batch/v1", "Job", "shop", "train"): job}
    keys = InstanceKeys(lambda _ns: [], lambda *ref: cached.get(ref))
    assert keys(job_pod()) == {"shop/wf"}
    assert keys(job_pod("unknown")) == set()
