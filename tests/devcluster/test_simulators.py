"""Simulated nodes, scheduler and kubelet: Node registration, Pod scheduling and lifecycle, and stopping cleanly.

Dev backend only: the dev backend's simulated controllers themselves (on the real backend the real controllers do
this work, which the e2e suite exercises).
"""

from __future__ import annotations

import re
import threading

import pytest

from engine.devcluster.cluster import DevCluster

from .simulated import (
    DURATION,
    FAIL,
    MESSAGE,
    NODES,
    JsonDict,
    Sim,
    cluster_fixture,
    condition_is,
    conditions,
    label_node,
    managers,
    pod,
    required_affinity,
    sim_fixture,
    unique,
)

pytestmark = pytest.mark.dev_only("see the module docstring")

cluster = cluster_fixture()
sim = sim_fixture()


def test_configured_nodes_are_registered_ready_with_well_known_labels_and_their_kplan_name(sim: Sim) -> None:
    for name in NODES:
        node = sim.read(sim.core.read_node, name)
        labels = node["metadata"]["labels"]
        assert labels["kubernetes.io/hostname"] == name
        assert labels["kubernetes.io/os"] == "linux"
        assert labels["node.kplan.dev/name"] == name  # what hello-world and ml-workflow select on
        ready = conditions(node)["Ready"]
        assert (ready["status"], ready["reason"]) == ("True", "KubeletReady")
        assert conditions(node)["MemoryPressure"]["status"] == "False"
        status = node["status"]
        assert status["capacity"]["pods"] == status["allocatable"]["pods"] == "110"
        assert {a["type"] for a in status["addresses"]} == {"InternalIP", "Hostname"}
        assert status["nodeInfo"]["kubeletVersion"] == "v1.37.2"
        assert ("kubelet", "status") in managers(node)


def test_a_node_created_through_the_api_becomes_ready(sim: Sim) -> None:
    name = unique("extra")
    sim.core.create_node({"metadata": {"name": name}})
    try:
        node = sim.wait(lambda: condition_is(sim.read(sim.core.read_node, name), "Ready")
                        and sim.read(sim.core.read_node, name))
        assert node["status"]["addresses"][0]["type"] == "InternalIP"
    finally:
        sim.core.delete_node(name)


def test_labelling_a_node_keeps_its_other_labels(sim: Sim) -> None:
    key = f"test.example.com/{unique('l')}"
    label_node(sim, "node2", {key: "yes"})
    labels = sim.read(sim.core.read_node, "node2")["metadata"]["labels"]
    assert labels[key] == "yes" and labels["kubernetes.io/hostname"] == "node2"
    label_node(sim, "node2", {key: None})


def test_a_pod_is_scheduled_to_a_node_and_runs_ready(sim: Sim) -> None:
    sim.core.create_namespaced_pod(sim.namespace, pod("web"))
    running = sim.wait(lambda: condition_is(p := sim.read(sim.core.read_namespaced_pod, "web", sim.namespace),
                                            "Ready") and p)
    assert running["spec"]["nodeName"] in NODES
    status = running["status"]
    assert status["phase"] == "Running"
    assert [c["type"] for c in status["conditions"]] == [
        "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
    assert all(c["status"] == "True" for c in status["conditions"])
    node = sim.read(sim.core.read_node, running["spec"]["nodeName"])
    assert status["hostIP"] == node["status"]["addresses"][0]["address"]
    assert re.fullmatch(r"10\.\d+\.\d+\.\d+", status["podIP"]) and status["podIPs"] == [{"ip": status["podIP"]}]
    (main,) = status["containerStatuses"]
    assert (main["name"], main["ready"], main["started"], main["restartCount"]) == ("main", True, True, 0)
    assert main["image"] == "docker.io/library/busybox:1.36"
    assert main["state"]["running"]["startedAt"] == status["startTime"]
    assert {("kubelet", "status"), ("kube-scheduler", "")} <= managers(running)


def test_a_pod_with_a_duration_runs_then_succeeds_with_its_termination_message(sim: Sim) -> None:
    since = sim.revision()
    notes = {DURATION: "300ms", MESSAGE + "main": '{"result": 42}'}
    sim.core.create_namespaced_pod(sim.namespace, pod("task", restart="Never", notes=notes))
    states = sim.history(sim.core.list_namespaced_pod, "task", since,
                         lambda p: (p.get("status") or {}).get("phase") == "Succeeded")
    phases = [s["status"].get("phase") for s in states]
    assert phases[0] == "Pending" and "Running" in phases and phases[-1] == "Succeeded"
    done = states[-1]
    terminated = done["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"], terminated["message"]) == (0, "Completed", '{"result": 42}')
    ready = conditions(done)["Ready"]
    assert (ready["status"], ready["reason"]) == ("False", "PodCompleted")
    assert conditions(done)["PodReadyToStartContainers"]["status"] == "False"


def test_a_failing_pod_ends_failed_with_an_error_exit_code(sim: Sim) -> None:
    sim.core.create_namespaced_pod(sim.namespace, pod("bad", restart="OnFailure", notes={FAIL: "true"}))
    failed = sim.wait(lambda: (p := sim.read(sim.core.read_namespaced_pod, "bad", sim.namespace))["status"].get(
        "phase") == "Failed" and p)
    terminated = failed["status"]["containerStatuses"][0]["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"]) == (1, "Error")
    assert conditions(failed)["Ready"]["reason"] == "PodFailed"


def test_a_failing_long_running_pod_crash_loops(sim: Sim) -> None:
    sim.core.create_namespaced_pod(sim.namespace, pod("crash", notes={FAIL: "true"}))

    def crashing() -> JsonDict | None:
        p = sim.read(sim.core.read_namespaced_pod, "crash", sim.namespace)
        statuses = p["status"].get("containerStatuses") or []
        return p if statuses and "waiting" in statuses[0]["state"] else None

    crash = sim.wait(crashing)
    main = crash["status"]["containerStatuses"][0]
    assert main["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert (main["ready"], main["restartCount"], main["lastState"]["terminated"]["exitCode"]) == (False, 1, 1)
    assert crash["status"]["phase"] == "Running"
    ready = conditions(crash)["Ready"]
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "False", "ContainersNotReady", "containers with unready status: [main]")


def test_a_long_running_pod_with_a_duration_runs_unready_first(sim: Sim) -> None:
    since = sim.revision()
    sim.core.create_namespaced_pod(sim.namespace, pod("slow", notes={DURATION: "300ms"}))
    states = sim.history(sim.core.list_namespaced_pod, "slow", since, lambda p: condition_is(p, "Ready"))
    starting = [s for s in states if s["status"].get("phase") == "Running" and condition_is(s, "Ready", "False")]
    assert starting, [s["status"] for s in states]
    assert starting[0]["status"]["containerStatuses"][0]["started"] is True
    assert starting[0]["status"]["containerStatuses"][0]["ready"] is False


def test_an_unschedulable_pod_says_why_and_is_scheduled_once_a_node_gets_the_label(sim: Sim) -> None:
    pool = unique("pool")
    sim.core.create_namespaced_pod(sim.namespace, pod("picky", node_selector={"pool": pool}))

    def unschedulable() -> JsonDict | None:
        found = conditions(sim.read(sim.core.read_namespaced_pod, "picky", sim.namespace)).get("PodScheduled")
        return found if found and found["status"] == "False" else None

    scheduled = sim.wait(unschedulable)
    assert scheduled["reason"] == "Unschedulable"
    assert re.match(r"0/(\d+) nodes are available: \1 node\(s\) didn't match Pod's node affinity/selector\. ",
                    scheduled["message"]), scheduled["message"]
    assert sim.read(sim.core.read_namespaced_pod, "picky", sim.namespace)["status"]["phase"] == "Pending"
    reasons = {e.reason for e in sim.core.list_namespaced_event(sim.namespace).items}
    assert "FailedScheduling" in reasons
    label_node(sim, "node2", {"pool": pool})
    try:
        running = sim.wait(lambda: condition_is(p := sim.read(sim.core.read_namespaced_pod, "picky", sim.namespace),
                                                "Ready") and p)
        assert running["spec"]["nodeName"] == "node2"
        assert conditions(running)["PodScheduled"]["status"] == "True"
    finally:
        label_node(sim, "node2", {"pool": None})


def test_a_pod_waits_for_a_node_matching_its_affinity_and_goes_with_it(sim: Sim) -> None:
    zone = unique("zone")
    sim.core.create_namespaced_pod(sim.namespace, pod("zonal", affinity=required_affinity("zone", zone)))
    sim.wait(lambda: condition_is(sim.read(sim.core.read_namespaced_pod, "zonal", sim.namespace), "PodScheduled",
                                  "False"))
    node = unique("zonal-node")
    sim.core.create_node({"metadata": {"name": node, "labels": {"zone": zone}}})
    try:
        running = sim.wait(lambda: condition_is(p := sim.read(sim.core.read_namespaced_pod, "zonal", sim.namespace),
                                                "Ready") and p)
        assert running["spec"]["nodeName"] == node
    finally:
        sim.core.delete_node(node)
    assert sim.wait(lambda: sim.read_or_none(sim.core.read_namespaced_pod, "zonal", sim.namespace) is None)


def test_a_deleted_pod_is_removed_by_its_kubelet(sim: Sim) -> None:
    sim.core.create_namespaced_pod(sim.namespace, pod("doomed"))
    sim.wait(lambda: condition_is(sim.read(sim.core.read_namespaced_pod, "doomed", sim.namespace), "Ready"))
    sim.core.delete_namespaced_pod("doomed", sim.namespace)
    assert sim.wait(lambda: sim.read_or_none(sim.core.read_namespaced_pod, "doomed", sim.namespace) is None)


def test_stopping_the_cluster_stops_the_simulators() -> None:
    before = set(threading.enumerate())  # the threads themselves: an ended thread's ident is reused by new ones
    running = DevCluster(port=0, simulate=True, nodes=("solo",)).start()
    code, body = running.request("GET", "/api/v1/nodes/solo")
    assert code == 200, body
    started = [t for t in threading.enumerate() if t not in before and t.name.startswith("devcluster-")]
    assert {"devcluster-simulators", "devcluster-timers"} <= {t.name for t in started}
    running.stop()
    assert [t.name for t in started if t.is_alive() and t.name in ("devcluster-simulators", "devcluster-timers")] == []
