"""What the server fills in on Jobs and CronJobs (found by comparing `kubectl create job/cronjob` on both
backends): a generated selector with manualSelector false, a label-less Job labelled like its template, and a
CronJob's jobTemplate defaulted only as a pod template."""

from __future__ import annotations

from typing import Any

from .simulated import JsonDict

POD_SPEC: JsonDict = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}


def test_a_job_without_labels_takes_its_templates_and_a_generated_selector(http: Any, namespace: str) -> None:
    created = http("POST", f"/apis/batch/v1/namespaces/{namespace}/jobs",
                   body={"metadata": {"name": "plain"}, "spec": {"template": {"spec": POD_SPEC}}}).body
    uid = created["metadata"]["uid"]
    assert created["spec"]["manualSelector"] is False
    assert created["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert created["metadata"]["labels"] == created["spec"]["template"]["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "plain",
        "controller-uid": uid, "job-name": "plain"}
    labelled = http("POST", f"/apis/batch/v1/namespaces/{namespace}/jobs",
                    body={"metadata": {"name": "mine", "labels": {"team": "a"}},
                          "spec": {"template": {"spec": POD_SPEC}}}).body
    assert labelled["metadata"]["labels"] == {"team": "a"}


def test_a_cronjobs_job_template_is_not_defaulted_as_a_job(http: Any, namespace: str) -> None:
    created = http("POST", f"/apis/batch/v1/namespaces/{namespace}/cronjobs",
                   body={"metadata": {"name": "nightly"},
                         "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": POD_SPEC}}}}})
    template = created.body["spec"]["jobTemplate"]
    assert template["metadata"] == {} and set(template["spec"]) == {"template"}
    assert template["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
