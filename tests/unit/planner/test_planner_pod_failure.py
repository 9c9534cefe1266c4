"""A step whose Job failed says why its pod failed: the container's exit code, reason and message (the Job's own
status only says BackoffLimitExceeded)."""

from __future__ import annotations

from planner_harness import Driver, job_driver, job_pod

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
