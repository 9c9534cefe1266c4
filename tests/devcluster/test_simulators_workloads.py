"""Simulated workload controllers: Deployments, ReplicaSets, StatefulSets, DaemonSets with their pods; volumes."""

from __future__ import annotations

from typing import Any

from kubernetes import watch

from .simulated import (
    DURATION,
    FAIL,
    JsonDict,
    Sim,
    cluster_fixture,
    condition_is,
    conditions,
    daemonset,
    deployment,
    label_node,
    managers,
    pod,
    sim_fixture,
    statefulset,
    unique,
)

cluster = cluster_fixture()
sim = sim_fixture()
HASH_ALPHABET = set("bcdfghjklmnpqrstvwxz2456789")


def rollout_done(d: JsonDict) -> bool:
    """kubectl rollout status for a Deployment (APISERVER §9)."""
    status, replicas = d.get("status") or {}, d["spec"]["replicas"]
    return (d["metadata"]["generation"] <= status.get("observedGeneration", 0)
            and status.get("updatedReplicas", 0) == replicas
            and status.get("replicas", 0) == status.get("updatedReplicas", 0)
            and status.get("availableReplicas", 0) == status.get("updatedReplicas", 0))


def read_deployment(sim: Sim, name: str) -> JsonDict:
    return sim.read(sim.apps.read_namespaced_deployment, name, sim.namespace)


def pods(sim: Sim, selector: str = "") -> dict[str, JsonDict]:
    items = sim.read(sim.core.list_namespaced_pod, sim.namespace, label_selector=selector)["items"]
    return {p["metadata"]["name"]: p for p in items}


def live_pods(sim: Sim, selector: str = "") -> dict[str, JsonDict]:
    return {n: p for n, p in pods(sim, selector).items() if not p["metadata"].get("deletionTimestamp")}


def replicasets(sim: Sim) -> dict[str, JsonDict]:
    items = sim.read(sim.apps.list_namespaced_replica_set, sim.namespace)["items"]
    return {rs["metadata"]["name"]: rs for rs in items}


def test_a_deployment_becomes_available_through_its_replicaset(sim: Sim) -> None:
    sim.apps.create_namespaced_deployment(sim.namespace, deployment("web", 2))
    done = sim.wait(lambda: rollout_done(d := read_deployment(sim, "web")) and d)
    status = done["status"]
    assert {k: status[k] for k in ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
                                   "availableReplicas")} == {"observedGeneration": 1, "replicas": 2,
                                                             "updatedReplicas": 2, "readyReplicas": 2,
                                                             "availableReplicas": 2}
    assert "unavailableReplicas" not in status
    (name, rs), = replicasets(sim).items()
    pod_hash = rs["metadata"]["labels"]["pod-template-hash"]
    assert name == f"web-{pod_hash}" and set(pod_hash) <= HASH_ALPHABET
    owner = rs["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["uid"], owner["controller"]) == ("Deployment", done["metadata"]["uid"], True)
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": pod_hash}
    assert rs["status"]["readyReplicas"] == 2
    owned = pods(sim, "app=web")
    assert len(owned) == 2
    for name_, p in owned.items():
        assert name_.startswith(f"{name}-") and p["metadata"]["labels"]["pod-template-hash"] == pod_hash
        assert p["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]
        assert condition_is(p, "Ready") and p["spec"]["nodeName"] in ("node1", "node2")
    available, progressing = conditions(done)["Available"], conditions(done)["Progressing"]
    assert (available["status"], available["reason"]) == ("True", "MinimumReplicasAvailable")
    assert (progressing["status"], progressing["reason"], progressing["message"]) == (
        "True", "NewReplicaSetAvailable", f'ReplicaSet "{name}" has successfully progressed.')
    assert done["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    assert ("kube-controller-manager", "status") in managers(done)


def test_a_slow_deployment_reports_that_it_is_not_yet_available(sim: Sim) -> None:
    since = sim.revision()
    sim.apps.create_namespaced_deployment(sim.namespace, deployment("slow", 2, notes={DURATION: "300ms"}))
    states = sim.history(sim.apps.list_namespaced_deployment, "slow", since, rollout_done)
    early = next(s for s in states if s.get("status", {}).get("conditions"))
    assert early["status"]["unavailableReplicas"] == 2 and "availableReplicas" not in early["status"]
    available, progressing = conditions(early)["Available"], conditions(early)["Progressing"]
    assert (available["status"], available["reason"], available["message"]) == (
        "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
    assert (progressing["status"], progressing["reason"]) == ("True", "NewReplicaSetCreated")
    assert progressing["message"].startswith('Created new replica set "slow-')


def test_a_new_template_rolls_out_a_new_replicaset_and_scales_the_old_one_down(sim: Sim) -> None:
    sim.apps.create_namespaced_deployment(sim.namespace, deployment("roll", 2))
    sim.wait(lambda: rollout_done(read_deployment(sim, "roll")))
    (first,) = replicasets(sim)
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.28"}]}}}}
    sim.apps.patch_namespaced_deployment("roll", sim.namespace, patch)
    done = sim.wait(lambda: rollout_done(d := read_deployment(sim, "roll")) and d["status"][
        "observedGeneration"] == 2 and d)
    sets = replicasets(sim)
    (second,) = set(sets) - {first}
    assert sets[first]["spec"]["replicas"] == 0 and sets[second]["spec"]["replicas"] == 2
    assert sets[second]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert done["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert done["status"]["replicas"] == 2 and conditions(done)["Progressing"]["message"] == (
        f'ReplicaSet "{second}" has successfully progressed.')


def test_scaling_a_deployment_keeps_its_replicaset(sim: Sim) -> None:
    sim.apps.create_namespaced_deployment(sim.namespace, deployment("scaled", 1))
    sim.wait(lambda: rollout_done(read_deployment(sim, "scaled")))
    sim.apps.patch_namespaced_deployment_scale("scaled", sim.namespace, {"spec": {"replicas": 3}})
    done = sim.wait(lambda: rollout_done(d := read_deployment(sim, "scaled")) and d["spec"]["replicas"] == 3 and d)
    assert done["status"]["availableReplicas"] == 3
    (rs,) = replicasets(sim).values()
    assert rs["spec"]["replicas"] == 3
    assert len(live_pods(sim, "app=scaled")) == 3
    sim.apps.patch_namespaced_deployment_scale("scaled", sim.namespace, {"spec": {"replicas": 1}})
    sim.wait(lambda: rollout_done(d := read_deployment(sim, "scaled")) and d["status"].get("replicas") == 1)
    sim.wait(lambda: len(pods(sim, "app=scaled")) == 1)


def test_a_deployment_whose_pods_fit_no_node_waits_for_one(sim: Sim) -> None:
    pool = unique("pool")
    manifest = deployment("pinned", 1)
    manifest["spec"]["template"]["spec"]["nodeSelector"] = {"pool": pool}
    sim.apps.create_namespaced_deployment(sim.namespace, manifest)

    def unschedulable() -> JsonDict | None:
        found = list(pods(sim, "app=pinned").values())
        return found[0] if found and condition_is(found[0], "PodScheduled", "False") else None

    assert conditions(sim.wait(unschedulable))["PodScheduled"]["reason"] == "Unschedulable"
    waiting = read_deployment(sim, "pinned")
    assert not rollout_done(waiting) and conditions(waiting)["Available"]["status"] == "False"
    label_node(sim, "node2", {"pool": pool})
    try:
        sim.wait(lambda: rollout_done(read_deployment(sim, "pinned")))
    finally:
        label_node(sim, "node2", {"pool": None})
    (running,) = pods(sim, "app=pinned").values()
    assert running["spec"]["nodeName"] == "node2"


def test_deleting_a_deployment_removes_its_replicasets_and_pods(sim: Sim) -> None:
    sim.apps.create_namespaced_deployment(sim.namespace, deployment("brief", 2))
    sim.wait(lambda: rollout_done(read_deployment(sim, "brief")))
    sim.apps.delete_namespaced_deployment("brief", sim.namespace)
    sim.wait(lambda: not replicasets(sim) and not pods(sim, "app=brief"))


def test_a_deployment_that_never_becomes_ready_exceeds_its_progress_deadline(sim: Sim) -> None:
    sim.apps.create_namespaced_deployment(sim.namespace, deployment("stuck", 1, notes={FAIL: "true"}, deadline=1))
    stuck = sim.wait(lambda: condition_is(d := read_deployment(sim, "stuck"), "Progressing", "False") and d)
    progressing = conditions(stuck)["Progressing"]
    assert progressing["reason"] == "ProgressDeadlineExceeded"
    assert progressing["message"].endswith("has timed out progressing.")
    assert conditions(stuck)["Available"]["status"] == "False"
    assert not rollout_done(stuck)


def test_a_statefulset_becomes_ready_at_one_revision(sim: Sim) -> None:
    sim.apps.create_namespaced_stateful_set(sim.namespace, statefulset("db", 2))

    def ready() -> JsonDict | None:
        s = sim.read(sim.apps.read_namespaced_stateful_set, "db", sim.namespace)
        return s if s.get("status", {}).get("readyReplicas") == 2 else None

    status = sim.wait(ready)["status"]
    assert {k: status[k] for k in ("observedGeneration", "replicas", "readyReplicas", "currentReplicas",
                                   "updatedReplicas", "availableReplicas")} == {
        "observedGeneration": 1, "replicas": 2, "readyReplicas": 2, "currentReplicas": 2, "updatedReplicas": 2,
        "availableReplicas": 2}
    assert status["currentRevision"] == status["updateRevision"] and status["updateRevision"].startswith("db-")
    members = pods(sim, "app=db")
    assert sorted(members) == ["db-0", "db-1"]
    for index, name in enumerate(["db-0", "db-1"]):
        labels = members[name]["metadata"]["labels"]
        assert labels["controller-revision-hash"] == status["updateRevision"]
        assert (labels["statefulset.kubernetes.io/pod-name"], labels["apps.kubernetes.io/pod-index"]) == (
            name, str(index))
        assert (members[name]["spec"]["hostname"], members[name]["spec"]["subdomain"]) == (name, "db")


def test_statefulset_pods_start_in_order_and_scale_down_from_the_top(sim: Sim) -> None:
    since = sim.revision()
    sim.apps.create_namespaced_stateful_set(sim.namespace, statefulset("zk", 3))
    states: list[tuple[str, str, bool]] = []
    stream = watch.Watch()
    for event in stream.stream(sim.core.list_namespaced_pod, sim.namespace, resource_version=since,
                               timeout_seconds=20):
        obj = event["raw_object"]
        states.append((event["type"], obj["metadata"]["name"], condition_is(obj, "Ready")))
        if event["type"] != "DELETED" and obj["metadata"]["name"] == "zk-2" and condition_is(obj, "Ready"):
            stream.stop()
    added = [name for kind, name, _ in states if kind == "ADDED"]
    assert added == ["zk-0", "zk-1", "zk-2"]
    for earlier, later in (("zk-0", "zk-1"), ("zk-1", "zk-2")):
        ready_at = states.index(next(s for s in states if s[1] == earlier and s[2]))
        assert ready_at < states.index(("ADDED", later, False))
    sim.apps.patch_namespaced_stateful_set_scale("zk", sim.namespace, {"spec": {"replicas": 1}})
    sim.wait(lambda: sorted(pods(sim, "app=zk")) == ["zk-0"])


def test_a_statefulset_rolls_to_a_new_revision(sim: Sim) -> None:
    since = sim.revision()
    sim.apps.create_namespaced_stateful_set(sim.namespace, statefulset("kv", 1))
    first = sim.history(sim.apps.list_namespaced_stateful_set, "kv", since,
                        lambda s: s.get("status", {}).get("readyReplicas") == 1)[-1]["status"]["updateRevision"]
    since = sim.revision()
    patch = {"metadata": {"annotations": {DURATION: "1ms"}},
             "spec": {"template": {"spec": {"containers": [{"name": "db", "image": "nginx:1.28"}]}}}}
    sim.apps.patch_namespaced_stateful_set("kv", sim.namespace, patch)
    states = sim.history(sim.apps.list_namespaced_stateful_set, "kv", since,
                         lambda s: s.get("status", {}).get("observedGeneration") == 2
                         and s["status"]["currentRevision"] == s["status"]["updateRevision"])
    second = states[-1]["status"]["updateRevision"]
    assert second != first
    assert any(s["status"].get("currentRevision") == first and s["status"].get("updateRevision") == second
               for s in states)
    (member,) = pods(sim, "app=kv").values()
    assert member["metadata"]["labels"]["controller-revision-hash"] == second
    assert member["spec"]["containers"][0]["image"] == "nginx:1.28"


def test_statefulset_claims_are_created_and_bound(sim: Sim) -> None:
    sim.apps.create_namespaced_stateful_set(sim.namespace, statefulset("pg", 2, claims=True))

    def bound() -> list[Any] | None:
        claims = sim.read(sim.core.list_namespaced_persistent_volume_claim, sim.namespace)["items"]
        phases = {c["metadata"]["name"]: c["status"].get("phase") for c in claims}
        return claims if phases == {"data-pg-0": "Bound", "data-pg-1": "Bound"} else None

    claims = sim.wait(bound)
    assert all(c["metadata"]["labels"] == {"app": "pg"} for c in claims)
    first = sim.wait(lambda: pods(sim, "app=pg").get("pg-0"))
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "data-pg-0"}} in first["spec"]["volumes"]


def test_a_daemonset_wants_one_replica_per_matching_node(sim: Sim) -> None:
    pool = unique("ds")
    sim.apps.create_namespaced_daemon_set(sim.namespace, daemonset("agent", {"pool": pool}))

    def status_with(desired: int) -> JsonDict | None:
        s = sim.read(sim.apps.read_namespaced_daemon_set, "agent", sim.namespace).get("status") or {}
        return s if s.get("observedGeneration") == 1 and s.get("desiredNumberScheduled") == desired \
            and s.get("numberReady") == desired else None

    none = sim.wait(lambda: status_with(0))
    assert none == {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                    "numberReady": 0, "observedGeneration": 1}
    label_node(sim, "node1", {"pool": pool})
    try:
        one = sim.wait(lambda: status_with(1))
        assert (one["updatedNumberScheduled"], one["numberAvailable"]) == (1, 1)
        assert "numberUnavailable" not in one
        (daemon,) = pods(sim, "app=agent").values()
        assert daemon["spec"]["nodeName"] == "node1" and daemon["metadata"]["name"].startswith("agent-")
        pin = daemon["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert pin["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["node1"]
    finally:
        label_node(sim, "node1", {"pool": None})
    sim.wait(lambda: status_with(0))
    sim.wait(lambda: not pods(sim, "app=agent"))


def test_a_standalone_replicaset_becomes_ready(sim: Sim) -> None:
    labels = {"app": "solo"}
    sim.apps.create_namespaced_replica_set(sim.namespace, {
        "metadata": {"name": "solo"}, "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    status = sim.wait(lambda: (s := sim.read(sim.apps.read_namespaced_replica_set, "solo", sim.namespace).get(
        "status") or {}).get("readyReplicas") == 2 and s)
    assert status == {"replicas": 2, "fullyLabeledReplicas": 2, "readyReplicas": 2, "availableReplicas": 2,
                      "observedGeneration": 1}
    assert len(pods(sim, "app=solo")) == 2


def read_claim(sim: Sim, name: str) -> JsonDict | None:
    return sim.read_or_none(sim.core.read_namespaced_persistent_volume_claim, name, sim.namespace)


def claim(name: str, notes: JsonDict | None = None) -> JsonDict:
    return {"metadata": {"name": name, "annotations": notes or {}}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}}}


def test_a_claim_binds_to_a_provisioned_volume_which_goes_with_it(sim: Sim) -> None:
    sim.core.create_namespaced_persistent_volume_claim(sim.namespace, claim("data", {DURATION: "100ms"}))
    bound = sim.wait(lambda: (c := read_claim(sim, "data")) and c["status"].get("phase") == "Bound" and c)
    volume_name = bound["spec"]["volumeName"]
    assert volume_name == f"pvc-{bound['metadata']['uid']}"
    assert bound["status"]["accessModes"] == ["ReadWriteOnce"] and bound["status"]["capacity"] == {"storage": "5Gi"}
    notes = bound["metadata"]["annotations"]
    assert notes["pv.kubernetes.io/bind-completed"] == "yes" and notes["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert "kubernetes.io/pvc-protection" in bound["metadata"]["finalizers"]
    volume = sim.read(sim.core.read_persistent_volume, volume_name)
    assert volume["status"]["phase"] == "Bound"
    assert (volume["spec"]["claimRef"]["name"], volume["spec"]["claimRef"]["uid"]) == ("data", bound["metadata"]["uid"])
    assert volume["spec"]["capacity"] == {"storage": "5Gi"}
    sim.core.delete_namespaced_persistent_volume_claim("data", sim.namespace)
    sim.wait(lambda: read_claim(sim, "data") is None)
    sim.wait(lambda: sim.read_or_none(sim.core.read_persistent_volume, volume_name) is None)


def test_a_claim_in_use_by_a_running_pod_stays_until_the_pod_is_gone(sim: Sim) -> None:
    sim.core.create_namespaced_persistent_volume_claim(sim.namespace, claim("used"))
    volumes = [{"name": "data", "persistentVolumeClaim": {"claimName": "used"}}]
    sim.core.create_namespaced_pod(sim.namespace, pod("user", volumes=volumes))
    sim.wait(lambda: condition_is(sim.read(sim.core.read_namespaced_pod, "user", sim.namespace), "Ready"))
    sim.core.delete_namespaced_persistent_volume_claim("used", sim.namespace)
    terminating = read_claim(sim, "used")
    assert terminating is not None and terminating["metadata"].get("deletionTimestamp")
    sim.core.delete_namespaced_pod("user", sim.namespace)
    sim.wait(lambda: read_claim(sim, "used") is None)
