"""A step waiting on a Job whose pod the scheduler cannot place says so (the Job's own status never does)."""

from __future__ import annotations

from planner_harness import Cluster, Driver, job_driver, job_pod

from engine.planner import Ref


def waiting_job_cluster() -> tuple[Driver, Cluster]:
    driver = job_driver("train", {"active": 1})
    return driver, driver.cluster


def pod(name: str, owner_uid: str, conditions: list[dict[str, str]]) -> dict[str, object]:
    return job_pod(name, owner_uid, {"phase": "Pending", "conditions": conditions})


UNSCHEDULABLE = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                 "message": "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."}


def test_the_step_message_names_the_pod_and_the_schedulers_reason() -> None:
    driver, cluster = waiting_job_cluster()
    cluster.put(pod("train-abcde", "job-uid", [UNSCHEDULABLE]))

    driver.step()

    state = driver.step_status("train")
    assert state["status"] == "IN_PROGRESS"
    assert state["message"] == (
        "Job shop/train: 0/1 succeeded; pod train-abcde cannot be scheduled: "
        "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."
    )


def test_a_scheduled_pod_or_a_pod_of_another_job_adds_nothing() -> None:
    driver, cluster = waiting_job_cluster()
    cluster.put(pod("train-abcde", "job-uid", [{"type": "PodScheduled", "status": "True"}]))
    cluster.put(pod("other-fghij", "other-uid", [UNSCHEDULABLE]))

    driver.step()

    assert driver.step_status("train")["message"] == "Job shop/train: 0/1 succeeded"
    assert Ref("v1", "Pod", "shop", "other-fghij") in cluster.objects
