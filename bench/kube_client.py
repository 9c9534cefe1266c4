"""The client side of the wire: CPU of one API request and of one watch event in engine.kube; prints one JSON object.

A dev cluster runs in a process of its own, so what this process spends is engine.kube's and the official client's
work alone. Figures, each per request or event (`--count N` of each, default 300):
- per verb (get, create, apply, merge patch, status update, list of 10) the CPU time of the thread that sent the
  requests (time.thread_time) and the wall time of a round trip;
- the CPU time of finding a Job's pods among `--pods N` cached pods of its namespace (default 1000), as a pass of
  a step waiting on a Job does (engine.runner.observed's `controlled_pods`);
- the CPU time of an informer's thread per watch event (a ConfigMap applied elsewhere: it arrives with its
  managedFields, decoded and compacted into the cache), and the latency from the informer's reader hearing of it
  (decoded, compacted, its key queued) to a work queue handing that key to an idle worker thread (p50, p90, max).
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from _common import cluster_process, machine, percentile

from engine.controller.queue import WorkQueue
from engine.kube import Caches, Kube, connect
from engine.runner.observed import ObservedView, RecentWrites

NAMESPACE = "default"


def config_map(name: str, index: int, group: str = "bench") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": group, "kplan.dev/instance": name}},
            "data": {"greeting": f"hello {index}", "count": str(index), "config.yaml": "a: 1\nb: [x, y]\n" * 4}}


def measured(count: int, send: Callable[[int], object]) -> dict[str, float]:
    """CPU ms of this thread and wall ms per call of `send(i)`, for i in range(count)."""
    cpu, wall = time.thread_time(), time.perf_counter()
    for i in range(count):
        send(i)
    return {"cpu_ms": round((time.thread_time() - cpu) * 1000 / count, 3),
            "wall_ms": round((time.perf_counter() - wall) * 1000 / count, 3)}


def requests(kube: Kube, count: int) -> dict[str, dict[str, float]]:
    kube.apply(config_map("warm", 0))
    kube.get("v1", "ConfigMap", "warm", NAMESPACE)
    for i in range(10):
        kube.apply(config_map(f"listed-{i}", i, "listed"))
    figures = {
        "create": measured(count, lambda i: kube.create(config_map(f"created-{i}", i))),
        "get": measured(count, lambda i: kube.get("v1", "ConfigMap", f"created-{i}", NAMESPACE)),
        "apply": measured(count, lambda i: kube.apply(config_map(f"created-{i}", i + 1), force=True)),
        "merge_patch": measured(count, lambda i: kube.patch("v1", "ConfigMap", f"created-{i}", NAMESPACE,
                                                             {"data": {"patched": str(i)}})),
        "list_10": measured(count // 10 or 1, lambda i: kube.list("v1", "ConfigMap", NAMESPACE,
                                                                  label_selector="app=listed")),
    }
    events = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "bench-status", "namespace": NAMESPACE},
              "involvedObject": {"kind": "ConfigMap", "name": "warm", "namespace": NAMESPACE}, "reason": "Bench",
              "message": "status target", "type": "Normal", "count": 1}
    kube.create(events)
    namespace = kube.get("v1", "Namespace", NAMESPACE) or {}
    figures["status_update"] = measured(count, lambda i: kube.replace(
        {**namespace, "metadata": {"name": NAMESPACE}, "status": {"phase": "Active"}}, subresource="status"))
    return figures


def job_pods(kube: Kube, count: int, pods: int) -> dict[str, Any]:
    """CPU of one look-up of an owner's pods in the watch cache, with `pods` pods cached in the namespace (bound to a
    node no kubelet runs, so they stay as created); ten owners control one pod each, the rest have no controller."""
    owners = [kube.create(config_map(f"pod-owner-{i}", i)) for i in range(10)]
    for i in range(pods):
        owner = owners[i] if i < len(owners) else None
        refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": owner["metadata"]["name"],
                 "uid": owner["metadata"]["uid"], "controller": True}] if owner else []
        kube.create({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"cached-{i:05d}", "namespace": NAMESPACE, "ownerReferences": refs},
                     "spec": {"nodeName": "no-kubelet", "containers": [{"name": "main", "image": "busybox:1.36"}]}})
    caches = Caches(kube)
    try:
        caches.ensure("v1", "Pod")
        view = ObservedView(caches, RecentWrites())
        found = [len(view.controlled_pods(owner)) for owner in owners]
        assert found == [1] * len(owners), found
        figures = measured(count, lambda i: view.controlled_pods(owners[i % len(owners)]))
    finally:
        caches.stop()
    return {"pods_cached": pods, "cpu_ms": figures["cpu_ms"]}


def informer_thread(kind: str) -> threading.Thread:
    return next(t for t in threading.enumerate() if t.name == f"informer-{kind}")


def thread_cpu(thread: threading.Thread) -> float:
    assert thread.ident is not None
    return time.clock_gettime(time.pthread_getcpuclockid(thread.ident))


def watch_events(kube: Kube, writer: Kube, count: int) -> dict[str, Any]:
    """Informer CPU per event, and the latency from its reader queueing a key to a worker's `get` of it."""
    caches, queue = Caches(kube), WorkQueue()
    heard: dict[str, float] = {}
    handed: dict[str, float] = {}

    def reader(change: str, obj: dict[str, Any], listed: bool) -> None:
        if not listed:
            heard.setdefault(obj["metadata"]["name"], time.perf_counter())
            queue.add(obj["metadata"]["name"])

    caches.add_reader(reader)
    caches.ensure("v1", "ConfigMap")
    stop = threading.Event()

    def work() -> None:
        while (key := queue.get(stop)) is not None:
            handed.setdefault(key, time.perf_counter())
            queue.done(key)

    worker = threading.Thread(target=work, name="worker-0", daemon=True)
    worker.start()
    informer = informer_thread("ConfigMap")
    try:
        before = thread_cpu(informer)
        for i in range(count):
            name = f"watched-{i}"
            writer.apply(config_map(name, i))
            time.sleep(0.002)  # one event at a time, as a manager's pass sees them (spacing, not synchronisation)
        deadline = time.monotonic() + 60
        while len(handed) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        cpu = thread_cpu(informer) - before
    finally:
        stop.set()
        queue.shutdown()
        worker.join()
        caches.stop()
    latencies = [(handed[name] - heard[name]) * 1000 for name in heard if name in handed]
    return {"events": count, "informer_cpu_ms_per_event": round(cpu * 1000 / count, 3),
            "queued_to_worker_ms": {"p50": round(percentile(latencies, 0.5), 3),
                                    "p90": round(percentile(latencies, 0.9), 3),
                                    "max": round(max(latencies), 3)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=300, help="requests of each verb and watch events (default 300)")
    parser.add_argument("--pods", type=int, default=1000, help="pods cached for the look-up of a Job's (default 1000)")
    args = parser.parse_args()
    with cluster_process() as served, connect(str(served.kubeconfig), namespace=NAMESPACE) as kube, \
            connect(str(served.kubeconfig), namespace=NAMESPACE) as writer:
        figures = {"requests": requests(kube, args.count), "job_pods": job_pods(kube, args.count, args.pods),
                   "watch": watch_events(kube, writer, args.count)}
    print(json.dumps({"bench": "kube_client", **machine(), **figures}, indent=2))


if __name__ == "__main__":
    main()
