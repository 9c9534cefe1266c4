"""kplan against Helm 4 installing the same objects; prints one JSON object.

The same six objects — a ConfigMap, a Secret, a Service, a Deployment, a StatefulSet and a Job — as a Helm chart
and as a kplan package (one step). Each side installs them into a fresh namespace and waits until they are ready:
`helm install --wait --wait-for-jobs`, `kplan install --wait` with a `kplan manager` process running, and
`kplan run`. Runs alternate, after one untimed warm-up of each; figures are medians (and min/max) of the wall
time of each command, the median CPU time (user + system) of the command's own process, which on a loaded
machine sets most of its wall time, and the API requests each made by verb (counted by the dev cluster; its
simulators' in-process requests left out; not counted on the real backend). Then the start-up of each side
without a request — the interpreter alone, `kplan run --help`, `helm version` — and what is left of each command's
median once that is taken off: its work against the cluster. Helm is the binary `tools/helm/build.sh`
(`make helm`) builds (`--helm PATH` to use another).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _common import RequestCount, add_backend_flag, install_crds, machine, runs_summary, write_package
from _common import cluster as cluster_for

from engine.devcluster.cluster import DevCluster
from engine.kube import connect

BIN = Path(sys.executable).parent
KPLAN = BIN / "kplan"
HELM = Path(os.environ.get("KPLAN_HELM_DIR", Path.home() / ".cache/kplan/helm-v4.3.1")) / "helm"
RUN_TIMEOUT = 300.0

OBJECTS = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}-config
data:
  greeting: hello
---
apiVersion: v1
kind: Secret
metadata:
  name: {name}-secret
stringData:
  password: not-a-real-one
---
apiVersion: v1
kind: Service
metadata:
  name: {name}
spec:
  selector: {{app: {name}}}
  ports: [{{port: 80, targetPort: 8080}}]
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}-web
spec:
  replicas: 2
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers: [{{name: web, image: "nginx:1.27"}}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {name}-db
spec:
  replicas: 1
  serviceName: {name}
  selector: {{matchLabels: {{app: {name}-db}}}}
  template:
    metadata: {{labels: {{app: {name}-db}}}}
    spec:
      containers: [{{name: db, image: "postgres:16"}}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}-init
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: init, image: busybox, command: ["true"]}}]
"""


def chart(folder: Path) -> Path:
    files = {"Chart.yaml": "apiVersion: v2\nname: bench\nversion: 0.1.0\n",
             "templates/objects.yaml": OBJECTS.format(name="{{ .Release.Name }}")}
    return write_package(files, folder)


def package(folder: Path) -> Path:
    operator = ("apiVersion: kplan.dev/v1alpha1\nname: bench\noperatorVersion: 0.1.0\n"
                "tasks:\n  - {name: all, kind: Apply, spec: {resources: [objects.yaml]}}\n"
                "plans:\n  deploy:\n    phases:\n      - name: main\n        steps:\n"
                "          - {name: all, tasks: [all]}\n")
    files = {"operator.yaml": operator, "params.yaml": "apiVersion: kplan.dev/v1alpha1\nparameters: []\n",
             "templates/objects.yaml": OBJECTS.format(name="{{ Name }}")}
    return write_package(files, folder)


def commands(side: str, helm: Path, chart_dir: Path, pkg: Path, kubeconfig: Path, namespace: str) -> list[str]:
    common = ["--kubeconfig", str(kubeconfig), "-n", namespace]
    if side == "helm_install_wait":
        return [str(helm), "install", "b", str(chart_dir), "--wait", "--wait-for-jobs", "--timeout", "2m", *common]
    verb = ["install", str(pkg), "--instance", "b", "--wait"] if side == "kplan_install_wait" else \
        ["run", str(pkg), "--instance", "b"]
    return [str(KPLAN), *verb, "--timeout", "2m", *common]


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of `command` run to its end."""
    cpu_before = children_cpu()
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False, env=env)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip() or done.stdout}")
    return wall, children_cpu() - cpu_before


def start_ups(args: argparse.Namespace, env: dict[str, str]) -> dict[str, float]:
    """Median wall time of programs that start and stop without a request, alternating: the interpreter alone,
    `kplan run --help` (every module `kplan run` loads before its first request) and `helm version`."""
    commands = {"python_pass": [str(BIN / "python"), "-c", "pass"], "kplan_run_help": [str(KPLAN), "run", "--help"],
                "helm_version": [str(args.helm), "version"]}
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(max(args.repeats, 1) * 2):
        for name, command in commands.items():
            times[name].append(timed(command, env)[0])
    return {name: round(statistics.median(values), 3) for name, values in times.items()}


def children_cpu() -> float:
    """CPU seconds of this process's children that have ended (the manager, still running, is not among them)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(args: argparse.Namespace) -> dict[str, Any]:
    sides = ("helm_install_wait", "kplan_install_wait", "kplan_run")
    with tempfile.TemporaryDirectory() as tmp, cluster_for(args.backend, nodes=("node-1", "node-2")) as cluster:
        folder = Path(tmp)
        kubeconfig = cluster.write_kubeconfig(folder / "config")
        chart_dir, pkg = chart(folder / "chart"), package(folder / "package")
        env = {**os.environ, "PATH": f"{BIN}:{os.environ.get('PATH', '')}", "HELM_CACHE_HOME": str(folder / "h"),
               "HELM_CONFIG_HOME": str(folder / "h"), "HELM_DATA_HOME": str(folder / "h"),
               "HELM_DRIVER": args.helm_driver}
        # kplan as installed runs from bytecode: without it every command compiles the engine's modules again
        # (~0.5 s of CPU); the warm-up run writes what the timed runs read.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        with connect(str(kubeconfig)) as observer:
            install_crds(observer)
        manager = subprocess.Popen([str(KPLAN), "manager", "--kubeconfig", str(kubeconfig), "--metrics-addr",
                                    "127.0.0.1:0", "--no-leader-elect"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, env=env)
        # The dev cluster counts the requests it answers; the real one is not asked (its metrics do not say who).
        counter = RequestCount(cluster) if isinstance(cluster, DevCluster) else None
        times: dict[str, list[float]] = {side: [] for side in sides}
        cpu: dict[str, list[float]] = {side: [] for side in sides}
        requests: dict[str, list[Counter[str]]] = {side: [] for side in sides}
        try:
            for rep in range(args.repeats + 1):  # the first of each is the warm-up
                for side in sides:
                    namespace = f"{side.replace('_', '-')}-{rep}"
                    cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": namespace}})
                    if counter is not None:
                        counter.take()
                    seconds, cpu_seconds = timed(commands(side, args.helm, chart_dir, pkg, kubeconfig, namespace), env)
                    counts = counter.take() if counter is not None else Counter()
                    if rep > 0:
                        times[side].append(seconds)
                        cpu[side].append(cpu_seconds)
                        requests[side].append(counts)
        finally:
            manager.terminate()
            manager.wait(30)
        start_up = start_ups(args, env)
    figures: dict[str, Any] = {side: {**runs_summary(times[side], requests[side]),
                                      "cpu_seconds_median": round(statistics.median(cpu[side]), 3)}
                               for side in sides}
    helm = figures["helm_install_wait"]
    for side in ("kplan_install_wait", "kplan_run"):
        figures[f"{side}_over_helm"] = round(figures[side]["wall_seconds_median"] / helm["wall_seconds_median"], 2)
        figures[f"{side}_cpu_over_helm"] = round(figures[side]["cpu_seconds_median"]
                                                 / max(helm["cpu_seconds_median"], 0.001), 2)
    figures["start_up_seconds_median"] = start_up
    # What is left of each command's wall time once its program has started: the work against the cluster.
    figures["after_start_up_seconds_median"] = {
        "helm_install_wait": round(helm["wall_seconds_median"] - start_up["helm_version"], 3),
        "kplan_run": round(figures["kplan_run"]["wall_seconds_median"] - start_up["kplan_run_help"], 3)}
    figures["manager_requests_note"] = ("kplan_install_wait counts the manager's requests during the install too, "
                                        "but not its CPU (the command's own only)")
    if counter is None:
        figures["api_requests_note"] = "not counted on the real backend"
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of each side (default 5)")
    parser.add_argument("--helm", type=Path, default=HELM, help=f"the helm binary (default {HELM})")
    parser.add_argument("--helm-driver", default="secret",
                        help="where Helm keeps its release record (HELM_DRIVER; default secret, as Helm's)")
    add_backend_flag(parser)
    args = parser.parse_args()
    if not args.helm.is_file():
        print(json.dumps({"bench": "vs_helm", **machine(), "skipped": f"no helm at {args.helm}: tools/helm/build.sh"}))
        return
    facts = machine()
    try:
        figures = measure(args)
    except RuntimeError as err:  # one side could not do it: say which and why, as a figure
        figures = {"failed": str(err)[:1000]}
    print(json.dumps({"bench": "vs_helm", **facts, "repeats": args.repeats, **figures}, indent=2))


if __name__ == "__main__":
    main()
