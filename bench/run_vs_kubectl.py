"""`kplan run` against a shell script of `kubectl apply --server-side` + `kubectl wait` doing the same plan;
prints one JSON object.

The plan: one phase of STEPS serial steps, each a ConfigMap and a Job that the simulating dev cluster completes
at once (0 s). kplan runs the package with `kplan run` (it records Operator, OperatorVersion and Instance, then
drives the plan from its own process); the script applies each step's objects — the same ones, rendered offline
by engine.render — with `kubectl apply --server-side`, then `kubectl wait --for=condition=complete` on its Job
before the next step. Both run as new processes against the same in-process dev cluster (kplan's CRDs installed
beforehand), each in a fresh namespace, alternating, after one untimed warm-up of each (it fills kubectl's
discovery cache, as on any machine that used kubectl before). Figures: median, min and max wall time over
REPEATS runs of each; the API requests each sent, by verb (counted by the dev cluster, the simulators' own
in-process requests left out), mean over the runs; and the start-up time of each tool alone (`kplan version`,
`kubectl version --client`), which the wall times include.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from _common import RequestCount, add_backend_flag, install_crds, machine, runs_summary, step_package, write_package
from _common import cluster as cluster_for

from engine import render
from engine.devcluster.backends import Cluster
from engine.devcluster.cluster import DevCluster
from engine.kube import connect
from engine.package import loader

BIN = Path(sys.executable).parent
KPLAN, KUBECTL = BIN / "kplan", BIN / "kubectl"
INSTANCE = "b"
RUN_TIMEOUT = 300.0  # seconds one run of either side may take


def kplan_command(package: Path, kubeconfig: Path, namespace: str) -> list[str]:
    return [str(KPLAN), "run", str(package), "--instance", INSTANCE, "-n", namespace, "--kubeconfig",
            str(kubeconfig), "--timeout", "2m"]


def script(package: Path, kubeconfig: Path, cache: Path, namespace: str, folder: Path) -> list[str]:
    """Write the step manifests and the script that applies and waits for them; the command that runs it."""
    pkg = loader.load(str(package))
    ctx = render.RenderContext(instance=INSTANCE, namespace=namespace, params={})
    lines = ["set -eu", f'k="{KUBECTL} --kubeconfig={kubeconfig} --cache-dir={cache} -n {namespace}"']
    for step, objects in render.render_plan(pkg, "deploy", ctx).items():
        manifest = folder / f"{step}.yaml"
        manifest.write_text(yaml.safe_dump_all(objects))
        lines.append(f"$k apply --server-side --field-manager=kplan-script -f {manifest} >/dev/null")
        for job in (obj for obj in objects if obj["kind"] == "Job"):
            lines.append(f"$k wait --for=condition=complete --timeout=120s job/{job['metadata']['name']} >/dev/null")
    path = folder / "plan.sh"
    path.write_text("\n".join(lines) + "\n")
    return ["sh", str(path)]


def timed(command: list[str]) -> float:
    # kplan as installed runs from bytecode: without it every command compiles the engine's modules again
    # (~0.5 s of CPU); the warm-up run writes what the timed runs read.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False,
                          env={**env, "PATH": f"{BIN}:{os.environ.get('PATH', '')}"})
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip() or done.stdout}")
    return seconds


def new_namespace(cluster: Cluster, name: str) -> str:
    code, body = cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": name}})
    if code != 201:
        raise RuntimeError(f"namespace {name}: {body}")
    return name


def startup(command: list[str], repeats: int) -> float:
    return round(statistics.median(timed(command) for _ in range(repeats)), 3)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, cluster_for(args.backend) as cluster:
        folder = Path(tmp)
        kubeconfig = cluster.write_kubeconfig(folder / "config")
        package = write_package(step_package("bench-run", args.steps), folder / "package")
        with connect(str(kubeconfig)) as observer:
            install_crds(observer)
        # The dev cluster counts the requests it answers; the real one is not asked (its metrics do not say who).
        counter = RequestCount(cluster) if isinstance(cluster, DevCluster) else None
        times: dict[str, list[float]] = {"kplan_run": [], "kubectl_script": []}
        requests: dict[str, list[Counter[str]]] = {"kplan_run": [], "kubectl_script": []}
        for rep in range(args.repeats + 1):  # the first of each is the warm-up
            for side in times:
                namespace = new_namespace(cluster, f"{side.replace('_', '-')}-{rep}")
                if side == "kplan_run":
                    command = kplan_command(package, kubeconfig, namespace)
                else:
                    (folder / namespace).mkdir()
                    command = script(package, kubeconfig, folder / "kube-cache", namespace, folder / namespace)
                if counter is not None:
                    counter.take()
                seconds = timed(command)
                counts = counter.take() if counter is not None else Counter()
                if rep > 0:
                    times[side].append(seconds)
                    requests[side].append(counts)
        figures: dict[str, Any] = {side: runs_summary(times[side], requests[side]) for side in times}
        figures["kplan_version_seconds_median"] = startup([str(KPLAN), "version"], 3)
        figures["kubectl_version_client_seconds_median"] = startup([str(KUBECTL), "version", "--client"], 3)
    figures["kplan_run_over_kubectl_script"] = round(figures["kplan_run"]["wall_seconds_median"]
                                                     / figures["kubectl_script"]["wall_seconds_median"], 2)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5, help="serial steps of ConfigMap + Job (default 5)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of each side (default 5)")
    add_backend_flag(parser)
    args = parser.parse_args()
    facts = machine()
    figures = measure(args)
    print(json.dumps({"bench": "run_vs_kubectl", **facts, "steps": args.steps, "repeats": args.repeats,
                      **figures}, indent=2))


if __name__ == "__main__":
    main()
