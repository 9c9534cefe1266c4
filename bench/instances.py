"""Many Instances of a small package converging under one manager; prints one JSON object.

A simulating dev cluster runs in a process of its own; this process runs one manager (engine.controller, no
leader election) and creates N Instances (default 1000, `--instances N`) of a two-step package — a ConfigMap,
then a Deployment of one replica that the simulator makes available at once — one after the other, as fast as
the API server takes them, while the manager works. Figures: wall time from the first create to the last
deploy plan COMPLETE and Instances per second; time-to-COMPLETE per Instance (its create sent → the observer's
watch sees COMPLETE), p50/p90/p99/max; when each quarter of the Instances had converged (the trend); the
manager's API requests by verb per Instance (get, list and watch always shown: reads should come from the watch
caches, so they stay near zero); reconcile passes per Instance; peak resident memory of this process (the
manager side) before the manager started and at the end, and of the cluster's process; CPU seconds of both, and
of the manager's own threads (the manager side without this script's creates and its watch of the Instances);
the cluster's CPU while serving, per Instance (its process's imports, which include this script's modules, and
its start are left out: they do not grow with the Instances). `until_idle`: the passes, the API writes and the manager's
threads' CPU once its queue is empty and its Events written after the last Instance converged (the passes still
queued then, and the Events still waiting for the recorder's thread, are left out above).
`--tracemalloc` adds the peak of Python allocations (and slows everything down). Bounded by `--budget`
seconds: when it runs out, the figures say how many Instances converged.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import tracemalloc
from collections import Counter
from typing import Any

from _common import (
    INSTANCE,
    add_backend_flag,
    chosen_backends,
    cluster_process,
    cpu_seconds,
    deploy_complete,
    install_crds,
    machine,
    manager_for,
    max_rss_mib,
    per_unit,
    percentile,
    threads_cpu_seconds,
    writes,
)

from engine.kube import Kube, connect
from engine.kube.objects import name_of
from engine.planner import FINALIZER

NAMESPACE = "bench"
PACKAGE = "bench-small"
VERSION = f"{PACKAGE}-0.1.0"
PODS_PER_NODE = 100  # fewer than a node's capacity of 110 pods
IDLE_WAIT = 60.0  # seconds the manager may take to work off its queue after the last Instance converged

CONFIG = """apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ Name }}-config
data:
  greeting: {{ Params.greeting | quote }}
"""

APP = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ Name }}-app
spec:
  replicas: 1
  selector:
    matchLabels: {app: "{{ Name }}"}
  template:
    metadata:
      labels: {app: "{{ Name }}"}
      annotations:
        devcluster.kplan.dev/duration: "0s"
    spec:
      containers:
        - name: app
          image: nginx:1.27
"""

OPERATOR = f"""apiVersion: kplan.dev/v1alpha1
name: {PACKAGE}
operatorVersion: 0.1.0
tasks:
  - {{name: config, kind: Apply, spec: {{resources: [config.yaml]}}}}
  - {{name: app, kind: Apply, spec: {{resources: [app.yaml]}}}}
plans:
  deploy:
    phases:
      - name: main
        strategy: serial
        steps:
          - {{name: config, tasks: [config]}}
          - {{name: app, tasks: [app]}}
"""

PARAMS = """apiVersion: kplan.dev/v1alpha1
parameters:
  - {name: greeting, default: hello}
"""


class Completions:
    """Watches the Instances of a namespace and notes when each one's deploy plan was first seen COMPLETE."""

    def __init__(self, kube: Kube, namespace: str, timeout: float) -> None:
        self.at: dict[str, float] = {}
        self._changed = threading.Condition()
        _, version = kube.list_with_version(*INSTANCE, namespace)
        self._watch = kube.watch(*INSTANCE, namespace=namespace, resource_version=version, timeout=timeout)
        self.thread = threading.Thread(target=self._follow, name="completions", daemon=True)
        self.thread.start()

    def _follow(self) -> None:
        with self._watch:
            for _change, obj in self._watch:
                if deploy_complete(obj):
                    with self._changed:
                        self.at.setdefault(name_of(obj), time.perf_counter())
                        self._changed.notify_all()

    def wait(self, count: int, deadline: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: len(self.at) >= count, max(0.0, deadline - time.perf_counter()))

    def stop(self) -> None:
        self._watch.stop()
        self.thread.join(10)


def instance(i: int, finalizer: bool) -> dict[str, Any]:
    """Instance `i`, with kplan's finalizer as `kplan install` creates it (or without, as a bare `kubectl create`)."""
    metadata: dict[str, Any] = {"name": f"i{i:05d}", "namespace": NAMESPACE}
    if finalizer:
        metadata["finalizers"] = [FINALIZER]
    return {"apiVersion": INSTANCE[0], "kind": INSTANCE[1], "metadata": metadata,
            "spec": {"operatorVersion": {"name": VERSION}}}


def converge(kube: Kube, count: int, completions: Completions, budget: float,
             finalizer: bool) -> tuple[dict[str, float], float, float]:
    """Create `count` Instances; their create times, how long the creates took, and when it ended."""
    start = time.perf_counter()
    deadline = start + budget
    created: dict[str, float] = {}
    for i in range(count):
        if time.perf_counter() > deadline:
            break
        obj = instance(i, finalizer)
        created[obj["metadata"]["name"]] = time.perf_counter()
        kube.create(obj)
    creating = time.perf_counter() - start
    completions.wait(len(created), deadline)
    return created, creating, start


def quarters(done: list[float], start: float, count: int) -> dict[str, float]:
    """Seconds from the first create until 25/50/75/100 % of `count` Instances had converged."""
    ordered = sorted(done)
    found = {}
    for share in (25, 50, 75, 100):
        needed = max(1, count * share // 100)
        if len(ordered) >= needed:
            found[f"{share}%"] = round(ordered[needed - 1] - start, 2)
    return found


def top_allocations(snapshot: tracemalloc.Snapshot, count: int) -> dict[str, float]:
    """The `count` source lines holding the most memory (KiB) while the manager still runs, the engine's paths
    made relative."""
    found = {}
    for stat in snapshot.statistics("lineno")[:count]:
        frame = stat.traceback[0]
        found[f"{short_path(frame.filename)}:{frame.lineno}"] = round(stat.size / 1024, 1)
    return found


def short_path(filename: str) -> str:
    """`engine/...`, a library's path inside site-packages, or the standard library's module path."""
    for marker, keep in (("/engine/", "engine/"), ("/site-packages/", ""), ("/lib/python3", "")):
        _, found, tail = filename.rpartition(marker)
        if found:
            return keep + (tail.partition("/")[2] if marker == "/lib/python3" else tail)
    return filename


def measure(args: argparse.Namespace, backend: str) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    # A node runs at most 110 pods (its capacity, as a kubelet's default): the real scheduler leaves the rest
    # Pending, so there are enough nodes for every Instance's one pod.
    nodes = tuple(f"node-{n}" for n in range(1, max(2, -(-args.instances // PODS_PER_NODE)) + 1))
    with cluster_process(nodes, backend) as served, connect(str(served.kubeconfig)) as obs:
        install_crds(obs)
        obs.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        files = {"operator.yaml": OPERATOR, "params.yaml": PARAMS, "templates/config.yaml": CONFIG,
                 "templates/app.yaml": APP}
        obs.create({"apiVersion": "kplan.dev/v1alpha1", "kind": "OperatorVersion",
                    "metadata": {"name": VERSION, "namespace": NAMESPACE},
                    "spec": {"operator": {"name": PACKAGE}, "version": "0.1.0", "files": files}})
        completions = Completions(obs, NAMESPACE, args.budget + 60)
        rss_before = max_rss_mib()
        if args.tracemalloc:
            tracemalloc.start()
        with manager_for(served.kubeconfig, NAMESPACE, args.workers) as (manager, kube, _timed):
            manager.caches.ensure("v1", "ConfigMap")  # as in a manager that has run for a while
            manager.caches.ensure("apps/v1", "Deployment")
            bench_threads = (threading.main_thread(), completions.thread)  # creating and observing
            before, cpu_before = Counter(kube.requests), cpu_seconds()
            threads_before = threads_cpu_seconds(leave_out=bench_threads)
            created, creating, start = converge(obs, args.instances, completions, args.budget, args.finalizer)
            wall = time.perf_counter() - start
            cpu = cpu_seconds() - cpu_before
            manager_cpu = threads_cpu_seconds(leave_out=bench_threads) - threads_before
            requests = Counter(kube.requests)
            requests.subtract(before)
            reconciles = manager.metrics.reconciles
            # What is still queued when the last Instance converged (the passes after it) is the manager's work too.
            idle = manager.queue.wait_idle(IDLE_WAIT)
            events_written = manager.runner.flush_events(IDLE_WAIT)  # written off the passes' path: some still queued
            idle_requests = Counter(kube.requests)
            idle_requests.subtract(before)
            idle_cpu = threads_cpu_seconds(leave_out=bench_threads) - threads_before
            idle_reconciles = manager.metrics.reconciles
            if args.tracemalloc:
                figures["tracemalloc_peak_mib"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
                figures["tracemalloc_held_mib"] = round(tracemalloc.get_traced_memory()[0] / 2**20, 1)
                figures["tracemalloc_top_kib"] = top_allocations(tracemalloc.take_snapshot(), args.tracemalloc_top)
                tracemalloc.stop()
        completions.stop()
        cluster = served.stop()
    done = {name: at for name, at in completions.at.items() if name in created}
    latencies = [done[name] - created[name] for name in done]
    converged = len(done)
    figures.update({
        "instances": args.instances,
        "created": len(created),
        "converged": converged,
        "workers": args.workers,
        "wall_seconds": round(wall, 2),
        "create_seconds": round(creating, 2),
        "instances_per_second": round(converged / wall, 2),
        "seconds_until_converged": quarters(list(done.values()), start, args.instances),
        "time_to_complete_seconds": {
            "p50": round(percentile(latencies, 0.5), 3), "p90": round(percentile(latencies, 0.9), 3),
            "p99": round(percentile(latencies, 0.99), 3), "max": round(max(latencies), 3),
        } if latencies else {},
        "created_with_finalizer": args.finalizer,
        "api_requests_per_instance": per_unit(requests, max(1, converged), always=("get", "list", "watch")),
        "api_writes_per_instance": writes(per_unit(requests, max(1, converged))),
        "reconciles_per_instance": round(reconciles / max(1, converged), 2),
        "manager_side_max_rss_mib": {"before": rss_before, "after": max_rss_mib()},
        "manager_side_cpu_seconds": round(cpu, 1),
        "manager_side_cpu_ms_per_instance": round(cpu / max(1, converged) * 1000, 1),
        "manager_threads_cpu_ms_per_instance": round(manager_cpu / max(1, converged) * 1000, 1),
        "until_idle": {"idle": idle, "events_written": events_written,
                       "api_writes_per_instance": writes(per_unit(idle_requests, max(1, converged))),
                       "reconciles_per_instance": round(idle_reconciles / max(1, converged), 2),
                       "manager_threads_cpu_ms_per_instance": round(idle_cpu / max(1, converged) * 1000, 1)},
        "cluster_process": cluster,
        "cluster_serving_cpu_ms_per_instance": round(cluster.get("serving_cpu_seconds", 0.0) / max(1, converged) * 1000,
                                                     1),
    })
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=1000, help="Instances to create (default 1000)")
    parser.add_argument("--workers", type=int, default=2, help="the manager's worker threads (default 2)")
    parser.add_argument("--budget", type=float, default=900.0, help="seconds before giving up (default 900)")
    parser.add_argument("--tracemalloc", action="store_true",
                        help="also trace Python allocations (slower): their peak, what is held at the end, and where")
    parser.add_argument("--tracemalloc-top", type=int, default=15,
                        help="with --tracemalloc: the source lines holding the most memory to show (default 15)")
    parser.add_argument("--finalizer", action=argparse.BooleanOptionalAction, default=True,
                        help="create the Instances with kplan's finalizer, as `kplan install` does (default: on)")
    add_backend_flag(parser, both=True)
    args = parser.parse_args()
    facts = machine()
    figures = {backend: measure(args, backend) for backend in chosen_backends(args.backend)}
    print(json.dumps({"bench": "instances", **facts, **figures}, indent=2))


if __name__ == "__main__":
    main()
