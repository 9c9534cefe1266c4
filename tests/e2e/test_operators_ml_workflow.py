"""operators/ml-workflow on a dev cluster with two labelled nodes and an in-process manager: each stage's Job is
created only once the previous one completed, on its node; a stage whose node label is missing holds the plan on
that step, saying why, until `kubectl label node` adds it; the variables a stage writes reach the later stages
when the rendered scripts run for real; and `make demo` (`python -m engine.demo`) runs to COMPLETE on either
backend, its pods run as processes, ending with the RMSE the last stage logged."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from workflow_harness import LABEL, NODES, WAIT, Workflow, steps

from engine.cli.test import run_kplan
from engine.kube import connect
from engine.testing import LocalCluster

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = str(ROOT / "operators" / "ml-workflow")
STAGES = ("process-data", "train-model", "evaluate-model")
NODE_OF = {"process-data": "node-1", "train-model": "node-2", "evaluate-model": "node-1"}


@pytest.fixture(scope="module")
def workflow(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workflow]:
    with LocalCluster(NODES, tmp_path_factory.mktemp("ml")) as local, connect(str(local.kubeconfig)) as kube:
        yield Workflow(local, kube)


class JobEvents:
    """Every committed change to a Job of one namespace, in commit order."""

    def __init__(self, workflow: Workflow, namespace: str) -> None:
        self.namespace = namespace
        self.items: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self.stop = workflow.local.cluster.subscribe(self._record)

    def _record(self, change: str, obj: dict[str, Any]) -> None:
        if obj.get("kind") == "Job" and obj["metadata"].get("namespace") == self.namespace:
            with self._lock:
                self.items.append((change, obj))

    def first(self, stage: str, *, completed: bool) -> int:
        with self._lock:
            items = list(self.items)
        for index, (change, job) in enumerate(items):
            if job["metadata"]["labels"].get("workflow.kplan.dev/stage") != stage:
                continue
            done = any(c["type"] == "Complete" and c["status"] == "True"
                       for c in (job.get("status") or {}).get("conditions") or [])
            if (completed and done) or (not completed and change == "ADDED"):
                return index
        raise AssertionError(f"no {'completion' if completed else 'creation'} of the {stage} Job was seen")


def test_each_stage_starts_only_after_the_previous_one_completed_on_its_own_node(workflow: Workflow) -> None:
    namespace = workflow.namespace()
    events = JobEvents(workflow, namespace)
    try:
        workflow.kplan("install", PACKAGE, "--instance", "ml", "-n", namespace,
                       "-p", "podAnnotations={devcluster.kplan.dev/duration: 300ms}")
        record = workflow.plan(namespace, lambda r: r.get("status") == "COMPLETE")
    finally:
        events.stop()

    assert [(name, s["status"]) for name, s in steps(record).items()] == [(s, "COMPLETE") for s in STAGES]
    created = [events.first(stage, completed=False) for stage in STAGES]
    completed = [events.first(stage, completed=True) for stage in STAGES]
    assert created[0] < completed[0] < created[1] < completed[1] < created[2] < completed[2]
    jobs = workflow.jobs(namespace)
    for before, after in itertools.pairwise(STAGES):
        assert jobs[after]["metadata"]["creationTimestamp"] >= jobs[before]["status"]["completionTime"]
    for stage in STAGES:
        assert jobs[stage]["spec"]["template"]["spec"]["nodeSelector"] == {LABEL: NODE_OF[stage]}
    pods = workflow.kube.list("v1", "Pod", namespace)
    assert {p["metadata"]["labels"]["workflow.kplan.dev/stage"]: p["spec"]["nodeName"] for p in pods} == NODE_OF


def test_a_missing_node_label_holds_the_plan_on_that_step_until_kubectl_labels_the_node(workflow: Workflow) -> None:
    namespace = workflow.namespace()
    workflow.kubectl("label", "node", "node-2", f"{LABEL}-")
    try:
        workflow.kplan("install", PACKAGE, "--instance", "ml", "-n", namespace)
        waiting = workflow.plan(namespace, lambda r: "cannot be scheduled" in str(steps(r).get("train-model")))

        assert waiting["status"] == "IN_PROGRESS"
        held = steps(waiting)
        assert (held["process-data"]["status"], held["train-model"]["status"], held["evaluate-model"]["status"]) \
            == ("COMPLETE", "IN_PROGRESS", "PENDING")
        assert "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector" \
            in held["train-model"]["message"]
        assert set(workflow.jobs(namespace)) == {"process-data", "train-model"}
    finally:
        workflow.kubectl("label", "node", "node-2", f"{LABEL}=node-2", "--overwrite")

    record = workflow.plan(namespace, lambda r: r.get("status") == "COMPLETE")
    assert [s["status"] for s in steps(record).values()] == ["COMPLETE"] * 3
    (train,) = [p for p in workflow.kube.list("v1", "Pod", namespace)
                if p["metadata"]["labels"]["workflow.kplan.dev/stage"] == "train-model"]
    assert train["spec"]["nodeName"] == "node-2"


def test_variables_a_stage_writes_reach_the_later_stages_when_the_scripts_run(tmp_path: Path) -> None:
    """The rendered ConfigMaps of one run, each stage's run.sh executed in turn with the shared volume in tmp_path."""
    work = tmp_path / "volume"
    code, output = run_kplan(["template", PACKAGE, "--instance", "ml", "-o", "json", "-p", f"workDir={work}",
                              "-p", "environment={SAMPLES: '40', GREETING: hello world}"])
    assert code == 0, output
    configs = {o["metadata"]["labels"]["workflow.kplan.dev/stage"]: o for o in json.loads(output)
               if o["kind"] == "ConfigMap"}
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    printed = {}
    for stage in STAGES:
        folder = tmp_path / stage
        folder.mkdir()
        for key, text in configs[stage]["data"].items():
            (folder / key).write_text(text)
        done = subprocess.run(["sh", str(folder / "run.sh")], capture_output=True, text=True, env=env, timeout=WAIT,
                              check=False)
        assert done.returncode == 0, done.stderr
        printed[stage] = done.stdout

    (run,) = (work / "runs").iterdir()
    assert printed["process-data"] == f"processed 40 samples into {run}/data/samples.csv\n"
    assert printed["train-model"].startswith("trained on 40 samples: y = ")
    assert printed["evaluate-model"].startswith(f"model {run}/model/model.json: RMSE ")
    assert (run / "process-data.env").read_text() == f"DATA_FILE={run}/data/samples.csv\n"
    assert (run / "train-model.env").read_text() == f"MODEL_FILE={run}/model/model.json\n"
    rmse = float((run / "evaluate-model.env").read_text().removeprefix("RMSE="))
    assert 0 < rmse < 1  # the data are y = 3x + 2 plus noise of 0.5: the fitted line is that close
    assert configs["train-model"]["data"]["environment.env"] == "GREETING='hello world'\nSAMPLES=40\n"


def test_make_demo_runs_the_workflow_to_complete(backend: str) -> None:
    done = subprocess.run([sys.executable, "-m", "engine.demo", "--backend", backend], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, check=False)

    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "$ kplan install operators/ml-workflow --instance ml" in out
    assert "Step train-model [IN_PROGRESS]: Job default/ml-train-model-1-" in out
    trees = out.split('Plan(s) for "ml" in namespace "default":')
    assert "Plan deploy (serial strategy) [COMPLETE]" in trees[-1]
    assert "$ kubectl get instances,jobs" in out
    instance_row = next(line for line in out.splitlines() if line.startswith("instance.kplan.dev/ml   "))
    assert instance_row.split()[1:5] == ["ml-workflow", "ml-workflow-0.2.0", "deploy", "COMPLETE"]
    job_rows = [line.split() for line in out.splitlines() if line.startswith("job.batch/ml-")]
    assert sorted((row[0].split("/")[1].rsplit("-", 2)[0], row[1]) for row in job_rows) == [
        ("ml-evaluate-model", "Complete"), ("ml-process-data", "Complete"), ("ml-train-model", "Complete")]
    train_pod = next(line.split() for line in out.splitlines() if line.startswith("ml-train-model-"))
    assert "node-2" in train_pod
    # the pods really ran (CI's host offers user and mount namespaces): the last stage's log shows the RMSE
    assert "Its pods run as local processes (--runtime process)" in out
    assert "$ kubectl logs ml-evaluate-model-1-" in out
    last = out.rstrip().splitlines()[-1]
    assert last.startswith("model /workflow/runs/1-") and 0 < float(last.rsplit("RMSE ", 1)[1]) < 1
