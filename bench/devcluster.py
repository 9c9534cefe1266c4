"""Dev cluster throughput and watch latency through the official client over loopback HTTP; prints one JSON object.

Figures: requests/second of server-side apply (ConfigMaps created, changed, unchanged; Deployments created), GET, and
LIST of 1000 ConfigMaps while a watch is open on them; watch delivery latency (write sent → event received, p50/p99);
and (dev backend) the server's CPU per status write made in process, as the simulators make theirs: a Job's, and
an Instance's halfway through a 50-step plan (what the manager's status writes cost the server past the socket).
Every phase is bounded by a count and a time budget, so the run ends by itself.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from _common import add_backend_flag, machine, percentile, rate
from _common import cluster as cluster_for
from kubernetes import client, watch

from engine import crds
from engine.devcluster.cluster import DevCluster

APPLY = "application/apply-patch+yaml"
NAMESPACE = "bench"
OBJECTS = 1000  # ConfigMaps applied, then listed
DEPLOYMENTS = 300
GETS = 2000
LISTS = 30
LATENCY_WRITES = 500
WATCH_SECONDS = 300  # the watch's own timeout, beyond any phase
STATUS_WRITES = 300  # in-process status writes of each kind
PLAN_STEPS = 50
SERVED_WAIT = 30.0  # seconds kplan's CRDs may take to be served


def configmap(i: int, value: str = "v") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}", "namespace": NAMESPACE},
            "data": {"key": value, "index": str(i)}}


def deployment(i: int) -> dict[str, Any]:
    labels = {"app": f"web-{i}"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"web-{i}", "namespace": NAMESPACE},
            "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                                           "ports": [{"containerPort": 80}]}]}}}}


@dataclass
class Watcher:
    """A watch on the bench ConfigMaps that notes when each `sent` stamp written into them arrives."""

    core: client.CoreV1Api
    latencies: list[float] = field(default_factory=list)
    arrived: threading.Condition = field(default_factory=threading.Condition)
    events: int = 0

    def run(self, since: str) -> None:
        stream = watch.Watch()
        try:
            for event in stream.stream(self.core.list_namespaced_config_map, NAMESPACE, resource_version=since,
                                       timeout_seconds=WATCH_SECONDS):
                now = time.perf_counter()
                sent = ((event["raw_object"].get("data") or {}).get("sent"))
                with self.arrived:
                    self.events += 1
                    if sent:
                        self.latencies.append(now - float(sent))
                    self.arrived.notify_all()
        except Exception:  # the cluster stopping ends the stream
            return

    def wait_for(self, count: int, timeout: float) -> bool:
        with self.arrived:
            return self.arrived.wait_for(lambda: len(self.latencies) >= count, timeout)


def measure(cluster: DevCluster) -> dict[str, Any]:
    config = client.Configuration()
    config.host = cluster.url
    api = client.ApiClient(config)
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    core.create_namespace({"metadata": {"name": NAMESPACE}})

    def apply_configmap(i: int, value: str = "v", body: dict[str, Any] | None = None) -> object:
        return core.patch_namespaced_config_map(f"cm-{i}", NAMESPACE, body or configmap(i, value),
                                                field_manager="bench", force=True, _content_type=APPLY,
                                                _preload_content=False)

    figures: dict[str, Any] = {}
    figures["ssa_apply_configmap_create_rps"] = rate(OBJECTS, apply_configmap)
    figures["ssa_apply_configmap_change_rps"] = rate(OBJECTS, lambda i: apply_configmap(i, "changed"))
    figures["ssa_apply_configmap_unchanged_rps"] = rate(OBJECTS, lambda i: apply_configmap(i, "changed"))
    figures["ssa_apply_deployment_create_rps"] = rate(DEPLOYMENTS, lambda i: apps.patch_namespaced_deployment(
        f"web-{i}", NAMESPACE, deployment(i), field_manager="bench", force=True, _content_type=APPLY,
        _preload_content=False))
    figures["get_rps"] = rate(GETS, lambda i: core.read_namespaced_config_map(
        f"cm-{i % OBJECTS}", NAMESPACE, _preload_content=False).data)

    since = core.list_namespaced_config_map(NAMESPACE, _preload_content=False)
    watcher = Watcher(core)
    thread = threading.Thread(target=watcher.run, args=(json.loads(since.data)["metadata"]["resourceVersion"],),
                              daemon=True)
    thread.start()
    list_times: list[float] = []

    def timed_list(_: int) -> None:
        start = time.perf_counter()
        items = json.loads(core.list_namespaced_config_map(NAMESPACE, _preload_content=False).data)["items"]
        list_times.append(time.perf_counter() - start)
        assert len(items) == OBJECTS, len(items)

    figures["list_1000_rps_with_watch_open"] = rate(LISTS, timed_list)
    figures["list_1000_ms_p50"] = round(statistics.median(list_times) * 1000, 2)

    def write_stamped(i: int) -> None:
        body = configmap(i % OBJECTS, "stamped")
        body["data"]["sent"] = repr(time.perf_counter())
        apply_configmap(i % OBJECTS, body=body)
        watcher.wait_for(i + 1, 10.0)

    figures["watched_write_rps"] = rate(LATENCY_WRITES, write_stamped)
    latencies = watcher.latencies
    figures["watch_latency_ms_p50"] = round(percentile(latencies, 0.5) * 1000, 2)
    figures["watch_latency_ms_p99"] = round(percentile(latencies, 0.99) * 1000, 2)
    figures["watch_latency_samples"] = len(latencies)
    api.close()
    return figures


def status_write_cpu(cluster: DevCluster) -> dict[str, float]:
    """CPU ms of this thread per status PUT through `DevCluster.request`: a Job's (`active` changing), and an
    Instance's with half of its plan's steps COMPLETE, the next IN_PROGRESS (its message changing) and the objects
    of the steps started in its inventory."""
    for definition in crds.load():
        cluster.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=definition)
    deadline = time.monotonic() + SERVED_WAIT
    while cluster.request("GET", "/apis/kplan.dev/v1alpha1/namespaces/bench/instances")[0] != 200:
        if time.monotonic() > deadline:
            raise TimeoutError("kplan's CRDs were not served")
        threading.Event().wait(0.01)
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "job", "namespace": NAMESPACE},
           "spec": {"template": {"spec": {"restartPolicy": "Never",
                                          "containers": [{"name": "main", "image": "busybox:1.36"}]}}}}
    _, job = cluster.request("POST", f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs", body=job)
    instances = f"/apis/kplan.dev/v1alpha1/namespaces/{NAMESPACE}/instances"
    _, instance = cluster.request("POST", instances, body={
        "apiVersion": "kplan.dev/v1alpha1", "kind": "Instance", "metadata": {"name": "chain", "namespace": NAMESPACE},
        "spec": {"operatorVersion": {"name": "chain-0.1.0"}}})
    at = "2026-12-01T00:00:00Z"
    done = PLAN_STEPS // 2

    def step(i: int, message: str) -> dict[str, Any]:
        status = "COMPLETE" if i < done else "IN_PROGRESS" if i == done else "PENDING"
        record = {"name": f"s{i}", "status": status, "message": message if i == done else ""}
        return {**record, "attempts": 0, "startedAt": at, "lastUpdatedAt": at} if i <= done else record

    def instance_status(n: int) -> dict[str, Any]:
        return {"lastRun": {"plan": "deploy", "operatorVersion": "chain-0.1.0", "parameters": {}},
                "activePlan": {"name": "deploy", "uid": "1", "status": "IN_PROGRESS"},
                "plans": {"deploy": {"status": "IN_PROGRESS", "uid": "1", "startedAt": at, "lastUpdatedAt": at,
                                     "message": "", "phases": [{"name": "main", "status": "IN_PROGRESS", "steps": [
                                         step(i, f"Job chain-s{done}: {n % 2}/1 succeeded")
                                         for i in range(PLAN_STEPS)]}]}},
                "appliedResources": [{"apiVersion": api_version, "kind": kind, "namespace": NAMESPACE,
                                      "name": f"chain-s{i}", "plan": "deploy"}
                                     for i in range(done + 1) for api_version, kind in (("v1", "ConfigMap"),
                                                                                       ("batch/v1", "Job"))],
                "observedGeneration": 1}

    def written(path: str, obj: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
        code, answer = cluster.request("PUT", f"{path}/status", body={**obj, "status": status}, shared=True)
        assert code == 200, answer
        return answer

    figures = {}
    start = time.thread_time()
    for n in range(STATUS_WRITES):
        job = written(f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs/job", job, {"active": n % 2})
    figures["job_status_write_cpu_ms"] = round((time.thread_time() - start) * 1000 / STATUS_WRITES, 3)
    bodies = [instance_status(n) for n in range(STATUS_WRITES)]  # made before the clock starts
    start = time.thread_time()
    for body in bodies:
        instance = written(f"{instances}/chain", instance, body)
    figures[f"instance_status_write_cpu_ms_{PLAN_STEPS}_steps"] = round(
        (time.thread_time() - start) * 1000 / STATUS_WRITES, 3)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_backend_flag(parser)
    args = parser.parse_args()
    started = time.perf_counter()
    facts = machine()
    with cluster_for(args.backend, port=0, simulate=False, nodes=()) as cluster:
        figures = measure(cluster)
        if isinstance(cluster, DevCluster):
            figures |= status_write_cpu(cluster)
    figures = {"bench": "devcluster", "objects": OBJECTS, **facts, **figures,
               "wall_seconds": round(time.perf_counter() - started, 1)}
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
