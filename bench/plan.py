"""Plan execution by the manager against the simulating dev cluster; prints one JSON object.

Two packages of 50 steps, each step a ConfigMap and a Job that the simulator completes at once (0 s):
`chain` (serial steps) and `parallel` (one parallel phase). For each: wall time from creating the Instance
to its deploy plan being COMPLETE; the sum of the manager's API round trips in that time (one Instance:
every pass of its key is sequential, so all of them are on the critical path); the time the simulator took
to run the Jobs on the critical path; engine overhead per step = (wall - round trips - simulated durations)
/ steps (declared durations are 0 s, so the simulator's own latency is in it); and, excluding the simulator,
the time when neither a request of the manager was under way nor a Job was running, per step (a Job runs
while the status write after its apply is under way: the two are not added); and the manager's API requests
by verb per applied object. The manager's caches of ConfigMaps and Jobs are filled before the clock starts,
as they would be in a running manager.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from _common import (
    INSTANCE,
    add_backend_flag,
    chosen_backends,
    cluster,
    covered,
    deploy_complete,
    install_crds,
    machine,
    manager_for,
    per_unit,
    step_package,
)

from engine.devcluster.backends import Cluster
from engine.kube import Kube, connect

STEPS = 50  # steps of each package, unless --steps says otherwise
WAIT = 300.0  # seconds a plan may take before the benchmark gives up


class JobClock:
    """When each Job of a namespace was created and completed, on this process's clock."""

    def __init__(self, cluster: Cluster, namespace: str) -> None:
        self.created: dict[str, float] = {}
        self.completed: dict[str, float] = {}
        self._namespace = namespace
        self.stop = cluster.subscribe(self._record, kinds=[("batch/v1", "Job")])  # the others, not copied

    def _record(self, change: str, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        if obj.get("kind") != "Job" or meta.get("namespace") != self._namespace:
            return
        now = time.perf_counter()
        self.created.setdefault(meta["name"], now)
        conditions = (obj.get("status") or {}).get("conditions") or []
        if any(c.get("type") == "Complete" and c.get("status") == "True" for c in conditions):
            self.completed.setdefault(meta["name"], now)

    def latencies(self) -> list[float]:
        return [self.completed[n] - self.created[n] for n in self.created if n in self.completed]

    def spans(self) -> list[tuple[float, float]]:
        return [(self.created[n], self.completed[n]) for n in self.created if n in self.completed]


def scenario(cluster: Cluster, observer: Kube, kubeconfig: Path, strategy: str, steps: int) -> dict[str, Any]:
    namespace = f"bench-{strategy}-{uuid.uuid4().hex[:6]}"
    observer.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    files = step_package(f"bench-{strategy}", steps, strategy)
    observer.create({"apiVersion": "kplan.dev/v1alpha1", "kind": "OperatorVersion",
                     "metadata": {"name": f"bench-{strategy}-0.1.0", "namespace": namespace},
                     "spec": {"operator": {"name": f"bench-{strategy}"}, "version": "0.1.0", "files": files}})
    jobs = JobClock(cluster, namespace)
    with manager_for(kubeconfig, namespace) as (manager, kube, timed):
        manager.caches.ensure("v1", "ConfigMap")
        manager.caches.ensure("batch/v1", "Job")
        before, spans_before = Counter(kube.requests), len(timed.spans)
        start = time.perf_counter()
        observer.create({"apiVersion": INSTANCE[0], "kind": INSTANCE[1],
                         "metadata": {"name": "b", "namespace": namespace},
                         "spec": {"operatorVersion": {"name": f"bench-{strategy}-0.1.0"}}})
        observer.wait_for(*INSTANCE, "b", namespace, deploy_complete, WAIT, condition="deploy COMPLETE")
        end = time.perf_counter()
        wall = end - start
        request_spans = timed.spans[spans_before:]
        round_trips, calls = sum(finish - begin for begin, finish in request_spans), len(request_spans)
        requests = Counter(kube.requests)
        requests.subtract(before)
    jobs.stop()
    latencies = jobs.latencies()
    simulator = sum(latencies) if strategy == "serial" else max(latencies)
    # A Job runs in the simulator while the manager's status write is under way: time that either covers is not
    # the engine's, counted once.
    outside = wall - covered([*request_spans, *jobs.spans()], start, end)
    objects = 2 * steps
    return {
        "steps": steps,
        "applied_objects": objects,
        "wall_seconds": round(wall, 3),
        "api_round_trips": calls,
        "api_round_trip_seconds": round(round_trips, 3),
        "simulated_duration_seconds": 0.0,
        "simulator_latency_seconds_on_critical_path": round(simulator, 3),
        "simulator_latency_ms_per_step": round(simulator / steps * 1000, 2),
        "engine_overhead_per_step_ms": round((wall - round_trips) / steps * 1000, 2),
        "engine_overhead_per_step_excluding_simulator_ms": round(outside / steps * 1000, 2),
        "api_requests_per_applied_object": per_unit(requests, objects),
        "reconciles": manager.metrics.reconciles,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_backend_flag(parser, both=True)
    parser.add_argument("--steps", type=int, default=STEPS, help=f"steps of each package (default {STEPS})")
    args = parser.parse_args()
    figures: dict[str, Any] = {"benchmark": "plan", **machine()}
    for backend in chosen_backends(args.backend):
        with cluster(backend) as served, tempfile.TemporaryDirectory() as folder:
            kubeconfig = served.write_kubeconfig(Path(folder) / "config")
            with connect(str(kubeconfig)) as observer:
                install_crds(observer)
                figures[backend] = {
                    f"chain_of_{args.steps}": scenario(served, observer, kubeconfig, "serial", args.steps),
                    f"parallel_{args.steps}": scenario(served, observer, kubeconfig, "parallel", args.steps)}
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
