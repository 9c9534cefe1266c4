"""Ownership: the field manager of each Instance, which Instance an object belongs to, refusing another
Instance's objects (FATAL_ERROR) or adopting them with `force`, and the legacy manager `kplan` handed over."""

from __future__ import annotations

from typing import Any

import pytest
from planner_harness import Cluster, Driver, apply_task, cm, configmap, instance, package, phase, plan, step

from engine.kube.managers import handed_over
from engine.model import Package
from engine.planner import Apply, Delete, Ref
from engine.planner.ownership import Claim, Handover, claim_of, field_manager, foreign_claim

MINE = "kplan/shop/cache"
OTHER = "kplan/shop/other"


def shared(force: bool = False) -> Package:
    """Instance `cache` renders the ConfigMap `shared`."""
    return package({"shared.yaml": configmap("shared")}, [apply_task("shared", "shared.yaml", force=force)],
                   [plan("deploy", phase("main", step("shared")))])


def live(owner: str | None, *, managers: tuple[str, ...] = (), labelled: str | None = None) -> dict[str, Any]:
    """ConfigMap `shared` as the cluster has it: owned by Instance `owner`, labelled with Instance `labelled`."""
    meta: dict[str, Any] = {"name": "shared", "namespace": "shop", "labels": {}}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "kplan.dev/v1alpha1", "kind": "Instance", "name": owner,
                                    "uid": f"uid-{owner}", "controller": True}]
    if labelled or owner:
        meta["labels"] = {"kplan.dev/instance": labelled or owner}
    meta["managedFields"] = [{"manager": m, "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
                              "fieldsV1": {"f:data": {}}} for m in managers]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"value": "theirs"}}


def started(pkg: Package, *objects: dict[str, Any]) -> Driver:
    driver = Driver(pkg, instance(), Cluster(objects))
    driver.step()
    return driver


def applies(driver: Driver) -> list[Apply]:
    return [a for a in driver.decisions[-1].actions if isinstance(a, Apply)]


def test_an_instance_applies_with_a_field_manager_of_its_own() -> None:
    driver = started(shared())

    [action] = applies(driver)
    assert (action.manager, action.handovers) == (MINE, ())


def test_a_field_manager_never_exceeds_the_servers_limit_and_stays_distinct() -> None:
    long_a, long_b = field_manager("ns", "a" * 200), field_manager("ns", "a" * 199 + "b")
    assert len(long_a) == len(long_b) == 128
    assert long_a != long_b and long_a.startswith("kplan/ns/aaa")


@pytest.mark.parametrize(("obj", "claim"), [
    (live("other"), Claim("shop", "other")),
    (live(None, labelled="other"), Claim(None, "other")),
    ({**live(None, labelled="other"), "metadata": {**live(None, labelled="other")["metadata"],
                                                   "annotations": {"kplan.dev/instance-namespace": "far"}}},
     Claim("far", "other")),
    (live(None), None),
])
def test_an_object_belongs_to_its_instance_owner_else_to_its_labels(obj: dict[str, Any], claim: Claim | None) -> None:
    assert claim_of(obj) == claim


def test_whose_an_object_is_follows_each_version_of_it_and_the_instance_asking() -> None:
    def version(owner: str, resource_version: str) -> dict[str, Any]:
        obj = live(owner)
        obj["metadata"].update(uid="uid-shared", resourceVersion=resource_version)
        return obj

    assert foreign_claim(version("other", "7"), "shop", "cache") == Claim("shop", "other")
    assert foreign_claim(version("other", "7"), "shop", "other") is None
    assert foreign_claim(version("cache", "8"), "shop", "cache") is None  # adopted back: a new version
    assert foreign_claim(version("cache", "8"), "shop", "other") == Claim("shop", "cache")
    assert foreign_claim(version("other", "7"), "shop", "cache") == Claim("shop", "other")
    assert foreign_claim(live("other"), "shop", "cache") == Claim("shop", "other")  # no version: read as it is
    assert foreign_claim(None, "shop", "cache") is None


def test_an_object_of_another_instance_is_refused_fatally_and_not_applied() -> None:
    driver = started(shared(), live("other", managers=(OTHER,)))

    assert applies(driver) == []
    record = driver.step_status("shared")
    assert record["status"] == "FATAL_ERROR"
    assert record["message"] == ("ConfigMap shop/shared belongs to Instance shop/other: kplan does not take over "
                                 "another Instance's objects; set `force: true` on task shared to adopt it")
    assert driver.plan_status() == "FATAL_ERROR"


def test_force_adopts_the_object_taking_over_the_other_instances_fields() -> None:
    driver = started(shared(force=True), live("other", managers=(OTHER, "kubectl")))

    [action] = applies(driver)
    assert action.force and action.manager == MINE
    assert action.handovers == (Handover(cm("shared"), (OTHER,)),)


def test_the_legacy_manager_of_an_object_labelled_with_this_instance_is_handed_over() -> None:
    driver = started(shared(), live("cache", managers=("kplan", "kubectl")))

    [action] = applies(driver)
    assert action.handovers == (Handover(cm("shared"), ("kplan",)),)


def test_an_object_adopted_by_another_instance_is_neither_healed_nor_deleted() -> None:
    driver = started(shared())
    driver.run()
    driver.cluster.put(live("other", managers=(OTHER,)))  # adopted with force: relabelled, re-owned, changed

    driver.step(1)

    assert applies(driver) == []
    assert driver.status["appliedResources"] == []  # no longer in this Instance's inventory
    driver.instance["metadata"]["deletionTimestamp"] = "2024-05-01T12:05:00Z"
    driver.run()
    assert not any(isinstance(a, Delete) for d in driver.decisions for a in d.actions)
    assert cm("shared") in driver.cluster.objects


def test_handing_over_merges_the_fields_into_the_new_managers_entry() -> None:
    entries = [
        {"manager": "kplan", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:data": {"f:a": {}}}},
        {"manager": MINE, "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:data": {"f:b": {}}, "f:metadata": {}}},
        {"manager": "kplan", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:status": {}}},
    ]

    assert handed_over(entries, {"kplan"}, MINE) == [
        entries[2],
        {"manager": MINE, "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:data": {"f:b": {}, "f:a": {}}, "f:metadata": {}}},
    ]
    assert handed_over(entries, {"helm"}, MINE) is None


STATEFULSET = """apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: "{{ Params.value | default('db:1') }}"}]}
  volumeClaimTemplates:
    - metadata: {name: data, labels: {tier: storage}}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


def statefulset_package() -> Package:
    return package({"db.yaml": STATEFULSET}, [apply_task("db", "db.yaml")], [plan("deploy", phase("main", step("db")))])


def claim_labels(obj: dict[str, Any]) -> dict[str, str]:
    return dict(obj["spec"]["volumeClaimTemplates"][0]["metadata"].get("labels") or {})


def test_a_new_statefulsets_claim_templates_carry_kplans_labels() -> None:
    [action] = applies(started(statefulset_package()))

    assert claim_labels(action.objects[0])["kplan.dev/instance"] == "cache"


def test_an_older_statefulsets_unlabelled_claim_templates_are_left_as_they_are_and_not_drift() -> None:
    """The API server refuses any change of volumeClaimTemplates: a StatefulSet made before kplan labelled them
    keeps them as they are, and their missing labels are not drift to heal."""
    driver = started(statefulset_package())
    [action] = applies(driver)
    older = {**action.objects[0], "spec": {**action.objects[0]["spec"], "volumeClaimTemplates": [
        {"metadata": {"name": "data", "labels": {"tier": "storage"}},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}
    driver = started(statefulset_package(), older)

    [action] = applies(driver)
    assert claim_labels(action.objects[0]) == {"tier": "storage"}
    driver.cluster.set_status(Ref.of(older), {"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1,
                                              "availableReplicas": 1, "currentReplicas": 1, "observedGeneration": 9})
    driver.run()
    assert driver.step_status("db")["status"] == "COMPLETE"
    assert all(not isinstance(a, Apply) for d in driver.decisions[1:] for a in d.actions)
