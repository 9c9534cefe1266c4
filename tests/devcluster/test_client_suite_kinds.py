"""What the official Python client's own e2e suite needs of a cluster: ReplicationControllers (served, defaulted
and run by their controller), apiregistration.k8s.io APIServices, the `default` ServiceAccount and the
`kube-root-ca.crt` ConfigMap in every namespace, and JSON answers that end in a newline as Go writes them."""

from __future__ import annotations

import pytest
from kubernetes import client

from engine.devcluster.backends import Cluster

from .helpers import http_call, make_api_client
from .simulated import JsonDict, Sim, container, sim_fixture, unique

sim = sim_fixture()


@pytest.fixture(scope="module")
def cluster(simcluster: Cluster) -> Cluster:
    """The session's simulated cluster of each backend: these are behaviours the two must agree on."""
    return simcluster


def replication_controller(name: str, replicas: int) -> JsonDict:
    return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": name},
            "spec": {"replicas": replicas,
                     "template": {"metadata": {"labels": {"name": name}}, "spec": {"containers": [container()]}}}}


def rc_pods(sim: Sim, name: str) -> list[JsonDict]:
    items = sim.read(sim.core.list_namespaced_pod, sim.namespace, label_selector=f"name={name}")["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def test_a_replication_controller_defaults_its_selector_and_labels_from_its_template(sim: Sim) -> None:
    created = sim.core.create_namespaced_replication_controller(sim.namespace, replication_controller("front", 2))
    assert created.spec.selector == {"name": "front"} and created.metadata.labels == {"name": "front"}
    assert created.spec.template.spec.restart_policy == "Always" and created.metadata.generation == 1
    read = sim.core.read_namespaced_replication_controller("front", sim.namespace)
    assert read.spec.replicas == 2


def test_a_replication_controller_keeps_its_replicas_running_and_reports_them(sim: Sim) -> None:
    name = unique("rc")
    sim.core.create_namespaced_replication_controller(sim.namespace, replication_controller(name, 2))

    def ready() -> JsonDict | None:
        rc = sim.read(sim.core.read_namespaced_replication_controller, name, sim.namespace)
        status = rc.get("status") or {}
        return rc if status.get("readyReplicas") == 2 and status.get("availableReplicas") == 2 else None

    status = sim.wait(ready)["status"]
    assert status["replicas"] == status["fullyLabeledReplicas"] == 2 and status["observedGeneration"] == 1
    pods = rc_pods(sim, name)
    assert len(pods) == 2 and all(p["metadata"]["name"].startswith(f"{name}-") for p in pods)
    owner = pods[0]["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("ReplicationController", name, True)
    scale = sim.core.read_namespaced_replication_controller_scale(name, sim.namespace)
    assert scale.status.replicas == 2 and scale.status.selector == f"name={name}"
    sim.core.patch_namespaced_replication_controller_scale(name, sim.namespace, {"spec": {"replicas": 1}})
    sim.wait(lambda: len(rc_pods(sim, name)) == 1)
    sim.core.delete_namespaced_replication_controller(name, sim.namespace, propagation_policy="Background")
    sim.wait(lambda: not rc_pods(sim, name))


def test_every_namespace_gets_a_default_service_account_and_the_root_ca_configmap(sim: Sim) -> None:
    sim.wait(lambda: sim.read_or_none(sim.core.read_namespaced_service_account, "default", sim.namespace))
    bundle = sim.wait(lambda: sim.read_or_none(sim.core.read_namespaced_config_map, "kube-root-ca.crt",
                                               sim.namespace))
    assert list(bundle["data"]) == ["ca.crt"]
    assert "kubernetes.io/description" in bundle["metadata"]["annotations"]
    sim.core.delete_namespaced_service_account("default", sim.namespace)
    sim.core.delete_namespaced_config_map("kube-root-ca.crt", sim.namespace)
    sim.wait(lambda: sim.read_or_none(sim.core.read_namespaced_service_account, "default", sim.namespace))
    sim.wait(lambda: sim.read_or_none(sim.core.read_namespaced_config_map, "kube-root-ca.crt", sim.namespace))


@pytest.fixture
def registration(cluster: Cluster) -> client.ApiregistrationV1Api:
    return client.ApiregistrationV1Api(make_api_client(cluster))


def test_apiservices_are_served_cluster_wide(registration: client.ApiregistrationV1Api, cluster: Cluster) -> None:
    name = f"v1alpha1.{unique('g')}.example.com"
    group = name.removeprefix("v1alpha1.")
    body = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": name},
            "spec": {"group": group, "version": "v1alpha1", "groupPriorityMinimum": 1000, "versionPriority": 15,
                     "insecureSkipTLSVerify": True, "service": {"name": "api", "namespace": "wardle"}}}
    created = registration.create_api_service(body)
    assert (created.spec.group, created.spec.version) == (group, "v1alpha1")
    again = http_call(cluster, "POST", "/apis/apiregistration.k8s.io/v1/apiservices", body=body)
    assert again.status == 409
    assert again.body["details"] == {"name": name, "group": "apiregistration.k8s.io", "kind": "apiservices"}
    registration.delete_api_service(name)


def test_the_system_priority_classes_exist_and_new_ones_preempt_lower_priorities(cluster: Cluster) -> None:
    code, listed = cluster.request("GET", "/apis/scheduling.k8s.io/v1/priorityclasses")
    values = {pc["metadata"]["name"]: pc["value"] for pc in listed["items"]}
    assert values["system-node-critical"] == 2000001000 and values["system-cluster-critical"] == 2000000000
    name = unique("batch")
    code, created = cluster.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
                                    body={"metadata": {"name": name}, "value": 100})
    assert code == 201 and created["preemptionPolicy"] == "PreemptLowerPriority"
    cluster.request("DELETE", f"/apis/scheduling.k8s.io/v1/priorityclasses/{name}")


def test_json_answers_end_in_a_newline_as_go_writes_them(cluster: Cluster) -> None:
    answer = http_call(cluster, "GET", "/api/v1/namespaces/default/configmaps/missing")
    assert answer.status == 404 and answer.raw.endswith(b'"code":404}\n')
