"""Plan execution by the manager against the simulating dev cluster; prints one JSON object.

Two packages of 50 steps, each step a ConfigMap and a Job that the simulator completes at once (0 s):
`chain` (serial steps) and `parallel` (one parallel phase). For each: wall time from creating the Instance
to its deploy plan being COMPLETE; the sum of the manager's API round trips in that time (one Instance:
every pass of its key is sequential, so all of them are on the critical path); the time the simulator took
to run the Jobs on the critical path; engine overhead per step = (wall - round trips - simulated durations)
/ steps (declared durations are 0 s, so the simulator's own latency is in it); and, excluding the simulator,
the time when neither a request of the manager was under way nor a Job was running, per step (a Job runs
while the status write after its apply is under way: the two are not added), also counted from the start of
the first Job only, with the time until then (the manager's first pass of a package new to it parses, verifies
and renders it: a cost paid once per package version, not per step); the manager's API requests by verb per
applied object; and the CPU time of the manager's worker threads per step, all of it and outside the requests'
round trips (its decisions, and the client's work on a request before it is sent and after it is answered: on a
serial chain, nearly all of the overhead). The manager's caches of ConfigMaps and Jobs are filled before the
clock starts, as they would be in a running manager. With the cluster in a process of its own (the default), the
CPU that process used from the create to COMPLETE, per step (on the real backend that is the simulators' process;
the control plane's binaries are not in it).
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import (
    INSTANCE,
    JobClock,
    add_backend_flag,
    chosen_backends,
    cluster,
    cluster_process,
    covered,
    deploy_complete,
    install_crds,
    machine,
    manager_for,
    per_unit,
    step_package,
    workers_cpu_seconds,
)

from engine.kube import Kube, connect

STEPS = 50  # steps of each package, unless --steps says otherwise
WAIT = 300.0  # seconds a plan may take before the benchmark gives up


@dataclass(frozen=True)
class Served:
    """The cluster a scenario runs against: its kubeconfig, the spans of a namespace's Jobs, and the CPU time of the
    cluster's process so far (NaN when the cluster shares this process)."""

    kubeconfig: Path
    job_spans: Callable[[str], list[tuple[float, float]]]
    cpu_seconds: Callable[[], float]


def scenario(served: Served, observer: Kube, strategy: str, steps: int) -> dict[str, Any]:
    namespace = f"bench-{strategy}-{uuid.uuid4().hex[:6]}"
    observer.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    files = step_package(f"bench-{strategy}", steps, strategy)
    observer.create({"apiVersion": "kplan.dev/v1alpha1", "kind": "OperatorVersion",
                     "metadata": {"name": f"bench-{strategy}-0.1.0", "namespace": namespace},
                     "spec": {"operator": {"name": f"bench-{strategy}"}, "version": "0.1.0", "files": files}})
    with manager_for(served.kubeconfig, namespace) as (manager, kube, timed):
        manager.caches.ensure("v1", "ConfigMap")
        manager.caches.ensure("batch/v1", "Job")
        before, spans_before = Counter(kube.requests), len(timed.spans)
        cluster_cpu = served.cpu_seconds()
        in_requests = Counter(timed.cpu_in_requests)
        workers_cpu = workers_cpu_seconds()
        start = time.perf_counter()
        observer.create({"apiVersion": INSTANCE[0], "kind": INSTANCE[1],
                         "metadata": {"name": "b", "namespace": namespace},
                         "spec": {"operatorVersion": {"name": f"bench-{strategy}-0.1.0"}}})
        observer.wait_for(*INSTANCE, "b", namespace, deploy_complete, WAIT, condition="deploy COMPLETE")
        end = time.perf_counter()
        workers_cpu = workers_cpu_seconds() - workers_cpu
        in_requests = Counter(timed.cpu_in_requests) - in_requests
        cluster_cpu = served.cpu_seconds() - cluster_cpu
        wall = end - start
        request_spans = timed.spans[spans_before:]
        round_trips, calls = sum(finish - begin for begin, finish in request_spans), len(request_spans)
        requests = Counter(kube.requests)
        requests.subtract(before)
    spans = served.job_spans(namespace)
    latencies = [finish - begin for begin, finish in spans]
    simulator = sum(latencies) if strategy == "serial" else max(latencies)
    # A Job runs in the simulator while the manager's status write is under way: time that either covers is not
    # the engine's, counted once.
    outside = wall - covered([*request_spans, *spans], start, end)
    # The same once the first Job runs: what each step costs after the package is parsed and verified, the plan
    # rendered and its first step applied (for a package new to the manager, a cost paid once, in its first pass).
    first_job = min(begin for begin, _ in spans)
    outside_after = (end - first_job) - covered([*request_spans, *spans], first_job, end)
    objects = 2 * steps
    figures = {
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
        "until_first_job_ms": round((first_job - start) * 1000, 1),
        "engine_overhead_per_step_excluding_simulator_after_first_job_ms": round(outside_after / steps * 1000, 2),
        "manager_workers_cpu_ms_per_step": round(workers_cpu / steps * 1000, 2),
        "manager_workers_cpu_outside_requests_ms_per_step": round(
            (workers_cpu - sum(cpu for name, cpu in in_requests.items() if name.startswith("worker-"))) / steps * 1000,
            2),
        "api_requests_per_applied_object": per_unit(requests, objects),
        "reconciles": manager.metrics.reconciles,
    }
    if not math.isnan(cluster_cpu):  # the cluster runs in a process of its own
        figures["cluster_process_cpu_ms_per_step"] = round(cluster_cpu / steps * 1000, 2)
    return figures


@contextmanager
def served_cluster(backend: str, where: str) -> Iterator[Served]:
    """The cluster, in its own process or on threads of this one."""
    if where == "process":
        with cluster_process(backend=backend) as process:
            yield Served(process.kubeconfig, process.job_spans, process.cpu_seconds)
        return
    with cluster(backend) as served, tempfile.TemporaryDirectory() as folder:
        jobs = JobClock(served)
        try:
            yield Served(served.write_kubeconfig(Path(folder) / "config"), jobs.spans, lambda: math.nan)
        finally:
            jobs.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_backend_flag(parser, both=True)
    parser.add_argument("--steps", type=int, default=STEPS, help=f"steps of each package (default {STEPS})")
    parser.add_argument("--cluster", choices=("process", "thread"), default="process",
                        help="run the cluster in a process of its own, as a manager and its cluster run (default), "
                             "or on threads of the benchmark's process, sharing the manager's interpreter lock")
    args = parser.parse_args()
    figures: dict[str, Any] = {"benchmark": "plan", "cluster": args.cluster, **machine()}
    for backend in chosen_backends(args.backend):
        with served_cluster(backend, args.cluster) as served, connect(str(served.kubeconfig)) as observer:
            install_crds(observer)
            figures[backend] = {
                f"chain_of_{args.steps}": scenario(served, observer, "serial", args.steps),
                f"parallel_{args.steps}": scenario(served, observer, "parallel", args.steps)}
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
