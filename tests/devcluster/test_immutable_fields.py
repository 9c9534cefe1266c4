"""Immutable fields of built-in workloads: an update that changes one is refused 422 with the real server's
message for each field (StatefulSet's serviceName, podManagementPolicy, selector and volumeClaimTemplates are
immutable one by one since 1.3x; the rest of its spec may change)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from engine.devcluster.backends import Cluster

CLAIM = {"metadata": {"name": "data"},
         "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}


def statefulset() -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
            "spec": {"serviceName": "db", "replicas": 1, "selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"}},
                                  "spec": {"containers": [{"name": "db", "image": "db:1"}]}},
                     "volumeClaimTemplates": [copy.deepcopy(CLAIM)]}}


def applied(cluster: Cluster, namespace: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    return cluster.request("PATCH", f"/apis/apps/v1/namespaces/{namespace}/statefulsets/db",
                           query={"fieldManager": "t"}, body=body, content_type="application/apply-patch+yaml")


def causes(answer: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in answer["details"]["causes"]]


def test_changing_service_name_and_pod_management_policy_names_each_field(devcluster: Cluster,
                                                                          namespace: str) -> None:
    assert applied(devcluster, namespace, statefulset())[0] == 201
    changed = statefulset()
    changed["spec"] |= {"serviceName": "other", "podManagementPolicy": "Parallel"}

    code, answer = applied(devcluster, namespace, changed)

    assert (code, answer["reason"]) == (422, "Invalid")
    assert answer["message"] == ('StatefulSet.apps "db" is invalid: [spec.serviceName: Invalid value: "other": '
                                 'field is immutable, spec.podManagementPolicy: Invalid value: "Parallel": field is '
                                 "immutable]")
    assert causes(answer) == [("spec.serviceName", 'Invalid value: "other": field is immutable'),
                              ("spec.podManagementPolicy", 'Invalid value: "Parallel": field is immutable')]


def test_changing_the_selector_prints_it_as_json(devcluster: Cluster, namespace: str) -> None:
    assert applied(devcluster, namespace, statefulset())[0] == 201
    changed = statefulset()
    changed["spec"]["selector"]["matchLabels"]["tier"] = "a"
    changed["spec"]["template"]["metadata"]["labels"]["tier"] = "a"

    code, answer = applied(devcluster, namespace, changed)

    assert code == 422
    assert causes(answer) == [("spec.selector", 'Invalid value: {"matchLabels":{"app":"db","tier":"a"}}: '
                                                "field is immutable")]


@pytest.mark.parametrize("change", [
    lambda claim: claim["metadata"].update(labels={"tier": "storage"}),
    lambda claim: claim["spec"]["resources"]["requests"].update(storage="2Gi"),
])
def test_changing_a_claim_template_is_refused_printing_the_new_templates_as_go_does(
        devcluster: Cluster, namespace: str, change: Any) -> None:
    assert applied(devcluster, namespace, statefulset())[0] == 201
    changed = statefulset()
    claim = changed["spec"]["volumeClaimTemplates"][0]
    change(claim)
    labels = ',"labels":{"tier":"storage"}' if claim["metadata"].get("labels") else ""
    storage = claim["spec"]["resources"]["requests"]["storage"]

    code, answer = applied(devcluster, namespace, changed)

    assert code == 422
    spec = ('{"AccessModes":["ReadWriteOnce"],"Selector":null,"Resources":{"Limits":null,"Requests":{"storage":"'
            f'{storage}"}}}},"VolumeName":"","StorageClassName":null,"VolumeMode":"Filesystem","DataSource":null,'
            '"DataSourceRef":null,"VolumeAttributesClassName":null}')
    status = ('{"Phase":"Pending","AccessModes":null,"Capacity":null,"Conditions":null,"AllocatedResources":null,'
              '"AllocatedResourceStatuses":null,"CurrentVolumeAttributesClassName":null,"ModifyVolumeStatus":null,'
              '"HealthStatus":null}')
    assert causes(answer) == [("spec.volumeClaimTemplates", f'Invalid value: [{{"name":"data"{labels},"Spec":{spec},'
                                                            f'"Status":{status}}}]: field is immutable')]


def test_the_mutable_rest_of_the_spec_may_change(devcluster: Cluster, namespace: str) -> None:
    assert applied(devcluster, namespace, statefulset())[0] == 201
    changed = statefulset()
    changed["spec"] |= {"replicas": 2, "minReadySeconds": 5, "revisionHistoryLimit": 3,
                        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}},
                        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"}}
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "db:2"

    code, answer = applied(devcluster, namespace, changed)

    assert code == 200, answer["message"]
    assert answer["spec"]["minReadySeconds"] == 5


def test_on_delete_with_the_defaulted_rolling_update_left_by_an_apply_is_invalid(devcluster: Cluster,
                                                                                 namespace: str) -> None:
    """The first apply left `rollingUpdate` defaulted (owned by no manager), so switching to OnDelete keeps it."""
    assert applied(devcluster, namespace, statefulset())[0] == 201
    changed = statefulset()
    changed["spec"]["updateStrategy"] = {"type": "OnDelete"}

    code, answer = applied(devcluster, namespace, changed)

    assert code == 422
    assert causes(answer) == [("spec.updateStrategy.rollingUpdate",
                               'Invalid value: {"Partition":0,"MaxUnavailable":1}: only allowed for updateStrategy '
                               "'RollingUpdate'")]
