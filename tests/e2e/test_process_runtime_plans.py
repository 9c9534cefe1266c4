"""Plans on a cluster whose pods really run (`runtime="process"`): operators/ml-workflow's stages run their
scripts in order, sharing the claim, and the evaluate stage's log shows the RMSE; a Pipe task stores what its pod
wrote; a Job whose command the host lacks fails, and its step says why the pod failed (StartError). On both
backends (the real one's Job controller runs the Jobs; its API server reads the logs from the kubelet's API)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from workflow_harness import NODES, Workflow, steps

from engine.kube import connect
from engine.testing import LocalCluster

ROOT = Path(__file__).resolve().parents[2]
ML_WORKFLOW = str(ROOT / "operators" / "ml-workflow")
PACKAGES = Path(__file__).parent / "packages"
STAGES = ("process-data", "train-model", "evaluate-model")
ENDED = ("COMPLETE", "FATAL_ERROR")


@pytest.fixture(scope="module")
def running(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workflow]:
    with LocalCluster(NODES, tmp_path_factory.mktemp("process"), backend=backend, runtime="process") as local, \
            connect(str(local.kubeconfig)) as kube:
        assert local.cluster.runtime_problem == ""  # CI's host offers user and mount namespaces
        yield Workflow(local, kube)


def test_ml_workflow_stages_run_their_scripts_in_order_and_evaluate_logs_the_rmse(running: Workflow) -> None:
    namespace = running.namespace()
    running.kplan("install", ML_WORKFLOW, "--instance", "ml", "-n", namespace)

    record = running.plan(namespace, lambda r: r.get("status") in ENDED)

    assert [(name, s["status"]) for name, s in steps(record).items()] == [(s, "COMPLETE") for s in STAGES], record
    pods = {p["metadata"]["labels"]["workflow.kplan.dev/stage"]: p for p in running.kube.list("v1", "Pod", namespace)}
    ran = {stage: pods[stage]["status"]["containerStatuses"][0]["state"]["terminated"] for stage in STAGES}
    for before, after in itertools.pairwise(STAGES):
        assert ran[before]["finishedAt"] <= ran[after]["startedAt"]
    assert all(ended["exitCode"] == 0 for ended in ran.values())
    logs = {stage: running.kubectl("logs", pods[stage]["metadata"]["name"], "-n", namespace) for stage in STAGES}
    run = pods["process-data"]["metadata"]["labels"]["workflow.kplan.dev/run"]
    assert logs["process-data"] == f"processed 200 samples into /workflow/runs/{run}/data/samples.csv\n"
    assert logs["train-model"].startswith("trained on 200 samples: y = 3.")
    prefix = f"model /workflow/runs/{run}/model/model.json: RMSE "
    assert logs["evaluate-model"].startswith(prefix)
    rmse = float(logs["evaluate-model"].removeprefix(prefix))
    assert 0 < rmse < 1  # the data are y = 3x + 2 plus noise of 0.5: the fitted line is that close


def test_a_pipe_task_stores_what_its_pod_wrote(running: Workflow) -> None:
    namespace = running.namespace()
    running.kplan("install", str(PACKAGES / "process-pipe"), "--instance", "calc", "-n", namespace)

    record = running.plan(namespace, lambda r: r.get("status") in ENDED, instance="calc")

    assert record["status"] == "COMPLETE", record
    computed = running.kube.get("v1", "Pod", "calc-compute", namespace)
    assert computed is not None
    wrote = f"uid={computed['metadata']['uid']} sum=45"
    assert computed["status"]["containerStatuses"][0]["state"]["terminated"]["message"] == wrote
    piped = running.kube.get("v1", "ConfigMap", "calc-answer", namespace)
    report = running.kube.get("v1", "ConfigMap", "calc-report", namespace)
    assert (piped or {}).get("data") == {"answer": wrote}
    assert (report or {}).get("data") == {"answer": wrote}


def test_a_missing_command_fails_the_job_and_the_step_says_why_the_pod_failed(running: Workflow) -> None:
    namespace = running.namespace()
    running.kplan("install", str(PACKAGES / "process-missing-command"), "--instance", "broken", "-n", namespace)

    record = running.plan(namespace, lambda r: steps(r).get("job", {}).get("status") in ("ERROR", "FATAL_ERROR"),
                          instance="broken")

    job = running.kube.get("batch/v1", "Job", "broken-job", namespace)
    failed = [c for c in ((job or {}).get("status") or {}).get("conditions") or [] if c["type"] == "Failed"]
    assert failed and failed[0]["status"] == "True"
    message = steps(record)["job"]["message"]
    assert "BackoffLimitExceeded" in message
    assert "exited with code 128 (StartError)" in message
    assert 'exec: "kplan-no-such-tool": executable file not found in $PATH' in message
