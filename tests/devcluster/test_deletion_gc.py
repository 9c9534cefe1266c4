"""Deletion: responses, preconditions, finalizers, graceful pods, garbage collection by owner uid with each
propagation policy, and namespace termination."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from .helpers import configmap


def owned_by(owner: Any, *, block: bool = False, controller: bool = False) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "name": owner.metadata.name, "uid": owner.metadata.uid,
            "blockOwnerDeletion": block, "controller": controller}


def dependent(name: str, *owners: dict[str, Any], finalizers: list[str] | None = None) -> dict[str, Any]:
    body = configmap(name)
    body["metadata"]["ownerReferences"] = list(owners)
    if finalizers:
        body["metadata"]["finalizers"] = finalizers
    return body


def gone(core: client.CoreV1Api, name: str, namespace: str) -> Callable[[], bool]:
    def check() -> bool:
        try:
            core.read_namespaced_config_map(name, namespace)
        except ApiException as e:
            return e.status == 404
        return False
    return check


def test_deleting_a_configmap_answers_a_success_status(http: Any, namespace: str, core: client.CoreV1Api) -> None:
    created = core.create_namespaced_config_map(namespace, configmap("a"))
    response = http("DELETE", f"/api/v1/namespaces/{namespace}/configmaps/a")
    assert response.status == 200
    assert response.body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                             "details": {"name": "a", "kind": "configmaps", "uid": created.metadata.uid}}


def test_deleting_a_pod_answers_the_pod(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_pod(namespace, {"metadata": {"name": "p"},
                                           "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    deleted = core.delete_namespaced_pod("p", namespace)
    assert deleted.kind == "Pod" and deleted.metadata.name == "p"


def test_a_uid_precondition_mismatch_conflicts(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("a"))
    with pytest.raises(ApiException) as err:
        core.delete_namespaced_config_map("a", namespace, body=client.V1DeleteOptions(
            preconditions=client.V1Preconditions(uid="not-the-uid")))
    assert err.value.status == 409
    status = json.loads(err.value.body)
    assert status["message"].startswith('Operation cannot be fulfilled on ConfigMap "a": the UID in the precondition '
                                        "(not-the-uid) does not match the UID in record (")
    assert status["details"] == {"name": "a", "kind": "ConfigMap"}


def test_finalizers_keep_a_deleted_object_until_they_are_removed(core: client.CoreV1Api, namespace: str,
                                                                 http: Any) -> None:
    body = configmap("a")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    core.create_namespaced_config_map(namespace, body)
    response = http("DELETE", f"/api/v1/namespaces/{namespace}/configmaps/a")
    assert response.status == 200 and response.body["metadata"]["deletionTimestamp"]
    assert response.body["metadata"]["deletionGracePeriodSeconds"] == 0
    held = core.read_namespaced_config_map("a", namespace)
    assert held.metadata.deletion_timestamp is not None
    last = core.patch_namespaced_config_map("a", namespace, {"metadata": {"finalizers": None}})
    assert last.metadata.name == "a"
    assert gone(core, "a", namespace)()


def test_no_finalizer_may_be_added_while_deleting(core: client.CoreV1Api, namespace: str) -> None:
    body = configmap("a")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    core.create_namespaced_config_map(namespace, body)
    core.delete_namespaced_config_map("a", namespace)
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_config_map("a", namespace, {"metadata": {"finalizers": ["example.com/hold",
                                                                                      "example.com/more"]}})
    assert err.value.status == 422
    assert "no new finalizers can be added if the object is being deleted" in json.loads(err.value.body)["message"]


def test_a_repeated_delete_of_a_terminating_object_changes_nothing(core: client.CoreV1Api, namespace: str) -> None:
    body = configmap("a")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    core.create_namespaced_config_map(namespace, body)
    core.delete_namespaced_config_map("a", namespace)
    first = core.read_namespaced_config_map("a", namespace).metadata.resource_version
    core.delete_namespaced_config_map("a", namespace)
    assert core.read_namespaced_config_map("a", namespace).metadata.resource_version == first


def test_a_scheduled_pod_is_deleted_gracefully(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_pod(namespace, {"metadata": {"name": "p"},
                                           "spec": {"nodeName": "node-1",
                                                    "containers": [{"name": "c", "image": "busybox"}]}})
    answer = core.delete_namespaced_pod("p", namespace)
    assert answer.metadata.deletion_grace_period_seconds == 30
    assert core.read_namespaced_pod("p", namespace).metadata.deletion_timestamp is not None
    core.delete_namespaced_pod("p", namespace, grace_period_seconds=0)
    with pytest.raises(ApiException) as err:
        core.read_namespaced_pod("p", namespace)
    assert err.value.status == 404


def test_background_deletion_collects_dependents(core: client.CoreV1Api, namespace: str,
                                                 wait_until: Callable[..., Any]) -> None:
    owner = core.create_namespaced_config_map(namespace, configmap("owner"))
    core.create_namespaced_config_map(namespace, dependent("dep", owned_by(owner)))
    core.delete_namespaced_config_map("owner", namespace)
    wait_until(gone(core, "dep", namespace))


def test_a_dependent_with_another_owner_only_loses_the_reference(core: client.CoreV1Api, namespace: str,
                                                                 wait_until: Callable[..., Any]) -> None:
    first = core.create_namespaced_config_map(namespace, configmap("first"))
    second = core.create_namespaced_config_map(namespace, configmap("second"))
    core.create_namespaced_config_map(namespace, dependent("dep", owned_by(first), owned_by(second)))
    core.delete_namespaced_config_map("first", namespace)

    def single_owner() -> bool:
        refs = core.read_namespaced_config_map("dep", namespace).metadata.owner_references or []
        return [r.uid for r in refs] == [second.metadata.uid]
    wait_until(single_owner)


def test_an_owner_with_the_same_name_but_another_uid_is_absent(core: client.CoreV1Api, namespace: str,
                                                               wait_until: Callable[..., Any]) -> None:
    owner = core.create_namespaced_config_map(namespace, configmap("owner"))
    core.delete_namespaced_config_map("owner", namespace)
    core.create_namespaced_config_map(namespace, configmap("owner"))
    core.create_namespaced_config_map(namespace, dependent("dep", owned_by(owner)))
    wait_until(gone(core, "dep", namespace))


def test_orphan_deletion_keeps_dependents_without_the_reference(core: client.CoreV1Api, namespace: str,
                                                                wait_until: Callable[..., Any]) -> None:
    owner = core.create_namespaced_config_map(namespace, configmap("owner"))
    core.create_namespaced_config_map(namespace, dependent("dep", owned_by(owner)))
    core.delete_namespaced_config_map("owner", namespace, propagation_policy="Orphan")
    wait_until(gone(core, "owner", namespace))
    assert not core.read_namespaced_config_map("dep", namespace).metadata.owner_references


def test_foreground_deletion_waits_for_blocking_dependents(core: client.CoreV1Api, namespace: str,
                                                           wait_until: Callable[..., Any]) -> None:
    owner = core.create_namespaced_config_map(namespace, configmap("owner"))
    core.create_namespaced_config_map(namespace, dependent("dep", owned_by(owner, block=True),
                                                           finalizers=["example.com/hold"]))
    core.delete_namespaced_config_map("owner", namespace, propagation_policy="Foreground")
    held = core.read_namespaced_config_map("owner", namespace)
    assert "foregroundDeletion" in held.metadata.finalizers
    wait_until(lambda: core.read_namespaced_config_map("dep", namespace).metadata.deletion_timestamp)
    assert core.read_namespaced_config_map("owner", namespace).metadata.deletion_timestamp is not None
    core.patch_namespaced_config_map("dep", namespace, {"metadata": {"finalizers": None}})
    wait_until(gone(core, "owner", namespace))


def test_two_controller_references_are_invalid(core: client.CoreV1Api, namespace: str) -> None:
    first = core.create_namespaced_config_map(namespace, configmap("first"))
    second = core.create_namespaced_config_map(namespace, configmap("second"))
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map(namespace, dependent("dep", owned_by(first, controller=True),
                                                               owned_by(second, controller=True)))
    assert err.value.status == 422


def test_a_deleted_namespace_terminates_refuses_content_and_goes_away(core: client.CoreV1Api,
                                                                      wait_until: Callable[..., Any]) -> None:
    core.create_namespace({"metadata": {"name": "doomed"}})
    body = configmap("held")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    core.create_namespaced_config_map("doomed", body)
    core.create_namespaced_config_map("doomed", configmap("plain"))
    answer = core.delete_namespace("doomed")
    assert answer["status"]["phase"] == "Terminating" and answer["spec"]["finalizers"] == ["kubernetes"]
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map("doomed", configmap("late"))
    assert err.value.status == 403
    status = json.loads(err.value.body)
    assert status["message"] == ('configmaps "late" is forbidden: unable to create new content in namespace doomed '
                                 "because it is being terminated")
    assert status["details"]["causes"][0]["reason"] == "NamespaceTerminating"
    # kube-controller-manager's namespace controller sweeps a namespace's content after a discovery of every
    # resource, and requeues it with backoff while content remains: on a loaded machine that takes longer than 10 s
    wait_until(gone(core, "plain", "doomed"), 60)

    def content_reported() -> bool:
        conditions = core.read_namespace("doomed").status.conditions or []
        return any(c.type == "NamespaceContentRemaining" and c.status == "True" for c in conditions)
    wait_until(content_reported, 60)
    core.patch_namespaced_config_map("held", "doomed", {"metadata": {"finalizers": None}})

    def namespace_gone() -> bool:
        try:
            core.read_namespace("doomed")
        except ApiException as e:
            return e.status == 404
        return False
    wait_until(namespace_gone, 60)


def test_the_default_namespace_cannot_be_deleted(core: client.CoreV1Api) -> None:
    with pytest.raises(ApiException) as err:
        core.delete_namespace("default")
    assert err.value.status == 403


def test_deleting_a_terminating_namespace_again_answers_it_as_it_is(core: client.CoreV1Api) -> None:
    core.create_namespace({"metadata": {"name": "twice"}})
    body = configmap("held")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    core.create_namespaced_config_map("twice", body)
    core.delete_namespace("twice")
    again = core.delete_namespace("twice")  # the client hands back the answer's JSON as it came
    assert again["status"]["phase"] == "Terminating" and again["metadata"]["deletionTimestamp"]
    core.patch_namespaced_config_map("held", "twice", {"metadata": {"finalizers": None}})


def test_delete_collection_answers_the_deleted_objects(http: Any, namespace: str, core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map(namespace, configmap("a", labels={"mine": "yes"}))
    response = http("DELETE", f"/api/v1/namespaces/{namespace}/configmaps", query={"labelSelector": "mine"})
    assert response.body["kind"] == "ConfigMapList"
    assert [i["metadata"]["name"] for i in response.body["items"]] == ["a"]
