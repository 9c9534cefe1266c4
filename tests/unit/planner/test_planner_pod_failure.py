"""A step whose Job failed says why its pod failed: the container's exit code, reason and message (the Job's own
status only says BackoffLimitExceeded)."""

from __future__ import annotations

from planner_harness import Driver, job_driver, job_pod

from engine.planner.refs import Ref

FAILED_JOB = {"failed": 1, "conditions": [
    {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
     "message": "Job has reached the specified backoff limit"}]}


def failed_pod(name: str, owner_uid: str, terminated: dict[str, object]) -> dict[str, object]:
    return job_pod(name, owner_uid, {"phase": "Failed", "containerStatuses": [
        {"name": "main", "state": {"terminated": terminated}}]})


def failed_job_driver() -> Driver:
    return job_driver("train", FAILED_JOB)


def test_the_failed_step_names_the_pod_and_its_containers_start_error() -> None:
    driver = failed_job_driver()
    driver.cluster.put(failed_pod("train-abcde", "job-uid", {
        "exitCode": 128, "reason": "StartError",
        "message": 'exec: "kplan-no-such-tool": executable file not found in $PATH: unknown'}))
    driver.cluster.put(failed_pod("other-fghij", "other-uid", {"exitCode": 1, "reason": "Error"}))

    driver.step()

    message = driver.step_status("train")["message"]
    assert message.startswith("Job shop/train failed: BackoffLimitExceeded: Job has reached the specified "
                              "backoff limit; Pod shop/train-abcde failed: container main exited with code 128 "
                              '(StartError): exec: "kplan-no-such-tool": executable file not found in $PATH')
    assert "other-fghij" not in message


def test_without_a_failed_pod_the_jobs_reason_stands_alone() -> None:
    driver = failed_job_driver()

    driver.step()

    assert driver.step_status("train")["message"] == ("Job shop/train failed: BackoffLimitExceeded: Job has reached "
                                                      "the specified backoff limit (no retries left after 1 attempts)")


def test_a_failed_job_whose_pod_is_seen_still_running_waits_for_the_pods_end_to_say_why() -> None:
    driver = failed_job_driver()  # the Job's watch event came before its pod's: the pod is seen running
    driver.cluster.put(job_pod("train-abcde", "job-uid", {"phase": "Running"}))

    driver.step()

    waiting = driver.step_status("train")
    assert waiting["status"] == "IN_PROGRESS"
    assert waiting["message"].endswith("waiting for its pods' final status")
    ended = failed_pod("train-abcde", "job-uid", {"exitCode": 2, "reason": "Error"})
    driver.cluster.objects[Ref.of(ended)]["status"] = ended["status"]  # its status changed, as the kubelet writes it

    driver.step()

    failed = driver.step_status("train")
    assert failed["status"] != "IN_PROGRESS"
    assert "Pod shop/train-abcde failed: container main exited with code 2 (Error)" in failed["message"]


def test_a_failed_job_whose_running_pod_is_being_deleted_fails_at_once() -> None:
    driver = failed_job_driver()  # pods deleted while running count as failed: no end of theirs is to come
    pod = job_pod("train-abcde", "job-uid", {"phase": "Running"})
    pod["metadata"]["deletionTimestamp"] = "2026-12-02T00:00:00Z"  # type: ignore[index]
    driver.cluster.put(pod)

    driver.step()

    assert driver.step_status("train")["status"] != "IN_PROGRESS"
