"""The simulated Job controller: completion and failure after a simulated duration, its pods, pending on nodes."""

from __future__ import annotations

import re

from .simulated import (
    DURATION,
    FAIL,
    JsonDict,
    Sim,
    cluster_fixture,
    condition_is,
    conditions,
    job,
    label_node,
    required_affinity,
    sim_fixture,
    unique,
)

cluster = cluster_fixture()
sim = sim_fixture()
POD_NAME = r"[bcdfghjklmnpqrstvwxz2456789]{5}"


def read_job(sim: Sim, name: str) -> JsonDict:
    return sim.read(sim.batch.read_namespaced_job, name, sim.namespace)


def finished(j: JsonDict) -> bool:
    return condition_is(j, "Complete") or condition_is(j, "Failed")


def pods_of(sim: Sim, name: str) -> list[JsonDict]:
    items: list[JsonDict] = sim.read(sim.core.list_namespaced_pod, sim.namespace,
                                     label_selector=f"batch.kubernetes.io/job-name={name}")["items"]
    return items


def test_a_job_runs_for_its_duration_then_completes(sim: Sim) -> None:
    since = sim.revision()
    sim.batch.create_namespaced_job(sim.namespace, job("work", notes={DURATION: "300ms"}))
    states = sim.history(sim.batch.list_namespaced_job, "work", since, finished)
    running = [s["status"] for s in states if s.get("status", {}).get("active")]
    assert running and all(s["active"] == 1 and s["startTime"] and "succeeded" not in s for s in running)
    assert [s["ready"] for s in running][-1] == 1
    criteria = next(s for s in states if condition_is(s, "SuccessCriteriaMet"))
    assert not condition_is(criteria, "Complete")
    done = states[-1]["status"]
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in done["conditions"]] == [
        ("SuccessCriteriaMet", "True", "CompletionsReached", "Reached expected number of succeeded pods"),
        ("Complete", "True", "CompletionsReached", "Reached expected number of succeeded pods")]
    assert done["succeeded"] == 1 and done["completionTime"] and "active" not in done and "failed" not in done
    assert (done["ready"], done["terminating"], done["uncountedTerminatedPods"]) == (0, 0, {})


def test_a_failing_job_fails_after_its_backoff_limit(sim: Sim) -> None:
    since = sim.revision()
    sim.batch.create_namespaced_job(sim.namespace, job("broken", notes={FAIL: "true"}, backoffLimit=2))
    states = sim.history(sim.batch.list_namespaced_job, "broken", since, finished)
    target = next(s for s in states if condition_is(s, "FailureTarget"))
    assert not condition_is(target, "Failed")
    done = states[-1]["status"]
    failed = conditions(states[-1])["Failed"]
    assert (failed["reason"], failed["message"]) == (
        "BackoffLimitExceeded", "Job has reached the specified backoff limit")
    assert done["failed"] == 3 and "completionTime" not in done and "succeeded" not in done
    (only,) = pods_of(sim, "broken")
    assert only["status"]["phase"] == "Failed"


def test_simulator_annotations_may_sit_on_the_pod_template(sim: Sim) -> None:
    sim.batch.create_namespaced_job(sim.namespace, job("tmpl", template_notes={FAIL: "true", DURATION: "10ms"},
                                                       backoffLimit=0))
    done = sim.wait(lambda: finished(j := read_job(sim, "tmpl")) and j)
    assert condition_is(done, "Failed") and done["status"]["failed"] == 1


def test_job_pods_are_named_labelled_owned_and_released_once_counted(sim: Sim) -> None:
    sim.batch.create_namespaced_job(sim.namespace, job("owned", notes={DURATION: "10ms"}))
    done = sim.wait(lambda: finished(j := read_job(sim, "owned")) and j)
    (pod,) = pods_of(sim, "owned")
    meta = pod["metadata"]
    assert re.fullmatch(rf"owned-{POD_NAME}", meta["name"])
    uid = done["metadata"]["uid"]
    assert meta["labels"]["batch.kubernetes.io/controller-uid"] == uid
    assert meta["labels"]["batch.kubernetes.io/job-name"] == "owned"
    owner = meta["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == ("Job", "owned", uid, True)
    assert meta["annotations"][DURATION] == "10ms"
    assert "batch.kubernetes.io/job-tracking" not in (meta.get("finalizers") or [])
    assert pod["status"]["phase"] == "Succeeded"


def test_a_job_whose_pods_fit_no_node_stays_pending_until_a_node_gets_the_label(sim: Sim) -> None:
    pool = unique("pool")
    sim.batch.create_namespaced_job(sim.namespace, job("pending", node_selector={"pool": pool}))

    def unschedulable_pod() -> JsonDict | None:
        pods = pods_of(sim, "pending")
        return pods[0] if pods and condition_is(pods[0], "PodScheduled", "False") else None

    pod = sim.wait(unschedulable_pod)
    scheduled = conditions(pod)["PodScheduled"]
    assert scheduled["reason"] == "Unschedulable"
    assert re.match(r"0/(\d+) nodes are available: \1 node\(s\) didn't match Pod's node affinity/selector\.",
                    scheduled["message"])
    status = read_job(sim, "pending")["status"]
    assert status["active"] == 1 and status["ready"] == 0 and not status.get("conditions")
    label_node(sim, "node1", {"pool": pool})
    try:
        done = sim.wait(lambda: finished(j := read_job(sim, "pending")) and j)
    finally:
        label_node(sim, "node1", {"pool": None})
    assert condition_is(done, "Complete")
    assert pods_of(sim, "pending")[0]["spec"]["nodeName"] == "node1"


def test_a_job_with_required_node_affinity_starts_when_a_matching_node_appears(sim: Sim) -> None:
    zone = unique("zone")
    sim.batch.create_namespaced_job(sim.namespace, job("zonal", affinity=required_affinity("zone", zone)))
    sim.wait(lambda: (pods := pods_of(sim, "zonal")) and condition_is(pods[0], "PodScheduled", "False"))
    node = unique("late")
    sim.core.create_node({"metadata": {"name": node, "labels": {"zone": zone}}})
    try:
        done = sim.wait(lambda: finished(j := read_job(sim, "zonal")) and j)
    finally:
        sim.core.delete_node(node)
    assert condition_is(done, "Complete") and pods_of(sim, "zonal")[0]["spec"]["nodeName"] == node


def test_completions_run_with_bounded_parallelism(sim: Sim) -> None:
    sim.batch.create_namespaced_job(sim.namespace, job("batch", completions=3, parallelism=2))
    done = sim.wait(lambda: finished(j := read_job(sim, "batch")) and j)
    assert condition_is(done, "Complete") and done["status"]["succeeded"] == 3
    assert len(pods_of(sim, "batch")) == 3


def test_an_indexed_job_runs_one_pod_per_index(sim: Sim) -> None:
    sim.batch.create_namespaced_job(sim.namespace, job("indexed", completions=2, parallelism=2,
                                                       completionMode="Indexed"))
    done = sim.wait(lambda: finished(j := read_job(sim, "indexed")) and j)
    assert done["status"]["completedIndexes"] == "0-1"
    pods = pods_of(sim, "indexed")
    assert sorted(p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] for p in pods) == ["0", "1"]
    assert all(re.fullmatch(rf"indexed-[01]-{POD_NAME}", p["metadata"]["name"]) for p in pods)


def test_a_job_past_its_active_deadline_fails_and_its_pod_is_removed(sim: Sim) -> None:
    sim.batch.create_namespaced_job(sim.namespace, job("late", notes={DURATION: "1h"}, activeDeadlineSeconds=1))
    done = sim.wait(lambda: finished(j := read_job(sim, "late")) and j)
    failed = conditions(done)["Failed"]
    assert (failed["reason"], failed["message"]) == (
        "DeadlineExceeded", "Job was active longer than specified deadline")
    sim.wait(lambda: pods_of(sim, "late") == [])


def test_a_suspended_job_creates_no_pods_until_resumed(sim: Sim) -> None:
    sim.batch.create_namespaced_job(sim.namespace, job("held", suspend=True))
    suspended = sim.wait(lambda: condition_is(j := read_job(sim, "held"), "Suspended") and j)
    assert conditions(suspended)["Suspended"]["reason"] == "JobSuspended"
    assert pods_of(sim, "held") == [] and "startTime" not in suspended["status"]
    sim.batch.patch_namespaced_job("held", sim.namespace, {"spec": {"suspend": False}})
    done = sim.wait(lambda: finished(j := read_job(sim, "held")) and j)
    assert conditions(done)["Suspended"]["status"] == "False" and condition_is(done, "Complete")


def test_deleting_a_running_job_removes_its_pods(sim: Sim) -> None:
    sim.batch.create_namespaced_job(sim.namespace, job("gone", notes={DURATION: "1h"}))
    sim.wait(lambda: read_job(sim, "gone").get("status", {}).get("ready") == 1)
    sim.batch.delete_namespaced_job("gone", sim.namespace, propagation_policy="Background")
    sim.wait(lambda: pods_of(sim, "gone") == [])
    events = {e.reason for e in sim.core.list_namespaced_event(sim.namespace).items}
    assert "SuccessfulCreate" in events
