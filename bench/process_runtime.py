"""The process runtime (`DevCluster(runtime="process")`): how long a pod whose container runs `true` takes from
its creation to Succeeded, with and without volumes (a pod with volumeMounts starts in a private user and mount
namespace), one pod after the other and N at once; and the wall time of operators/ml-workflow's deploy plan with
its stages really running.

    .venv/bin/python bench/process_runtime.py [--pods 20]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import machine, percentile, wait_until

from engine.cli import main as cli
from engine.devcluster.cluster import DevCluster
from engine.kube import connect
from engine.testing import LocalCluster, Node

ROOT = Path(__file__).resolve().parents[1]
BUDGET = 120.0


def pod(name: str, volumes: bool) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": "busybox:1.36", "command": ["true"]}
    spec: dict[str, Any] = {"restartPolicy": "Never", "containers": [container]}
    if volumes:
        container["volumeMounts"] = [{"name": "scratch", "mountPath": "/scratch"}]
        spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    return {"metadata": {"name": name}, "spec": spec}


def phase(cluster: DevCluster, name: str) -> str:
    code, body = cluster.request("GET", f"/api/v1/namespaces/default/pods/{name}")
    return str((body.get("status") or {}).get("phase")) if code == 200 else ""


def create_to_succeeded(cluster: DevCluster, names: list[str], volumes: bool) -> list[float]:
    """Seconds from each pod's creation to Succeeded; all created at once."""
    started = {}
    for name in names:
        started[name] = time.monotonic()
        code, body = cluster.request("POST", "/api/v1/namespaces/default/pods", body=pod(name, volumes))
        assert code == 201, body
    done: dict[str, float] = {}

    def all_done() -> bool:
        for name in names:
            if name not in done and phase(cluster, name) == "Succeeded":
                done[name] = time.monotonic() - started[name]
        return len(done) == len(names)

    wait_until(all_done, BUDGET, "pods to succeed")
    return [done[n] for n in names]


def summary(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(percentile(values, 0.5) * 1000, 1), "p90_ms": round(percentile(values, 0.9) * 1000, 1),
            "max_ms": round(max(values) * 1000, 1)}


def pods_figures(count: int) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    with DevCluster(simulate=True, nodes=["node1"], runtime="process") as cluster:
        figures["host_problem"] = cluster.runtime_problem
        for volumes in (False, True):
            label = "with_volume" if volumes else "without_volume"
            serial = [create_to_succeeded(cluster, [f"s-{label}-{i}".replace("_", "-")], volumes)[0]
                      for i in range(count)]
            together = create_to_succeeded(cluster, [f"t-{label}-{i}".replace("_", "-") for i in range(count)],
                                           volumes)
            figures[label] = {"one_at_a_time": summary(serial), f"{count}_at_once": summary(together),
                              f"{count}_at_once_wall_s": round(max(together), 2)}
    return figures


def ml_workflow_seconds() -> float:
    nodes = (Node("node-1", {"node.kplan.dev/name": "node-1"}), Node("node-2", {"node.kplan.dev/name": "node-2"}))
    with tempfile.TemporaryDirectory() as folder, LocalCluster(nodes, Path(folder), runtime="process") as local:
        kubeconfig = str(local.kubeconfig)
        started = time.monotonic()
        with contextlib.redirect_stdout(io.StringIO()):  # the benchmark prints one JSON object only
            code = cli.main(["install", str(ROOT / "operators" / "ml-workflow"), "--instance", "ml", "-n", "default",
                             "--kubeconfig", kubeconfig, "--wait", "--timeout", f"{BUDGET:g}s"])
        elapsed = time.monotonic() - started
        assert code == 0
        with connect(kubeconfig) as kube:
            instance = kube.get("kplan.dev/v1alpha1", "Instance", "ml", "default")
            assert ((instance or {}).get("status") or {}).get("plans", {}).get("deploy", {}).get("status") == "COMPLETE"
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=20)
    args = parser.parse_args()
    figures = {"benchmark": "process_runtime", **machine(), "pods": args.pods, **pods_figures(args.pods)}
    figures["ml_workflow_deploy_s"] = round(ml_workflow_seconds(), 2)
    print(json.dumps(figures), file=sys.stdout, flush=True)


if __name__ == "__main__":
    main()
