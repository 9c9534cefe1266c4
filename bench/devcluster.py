"""Dev cluster throughput and watch latency through the official client over loopback HTTP; prints one JSON object.

Figures: requests/second of server-side apply (ConfigMaps created, changed, unchanged; Deployments created), GET, and
LIST of 1000 ConfigMaps while a watch is open on them; watch delivery latency (write sent → event received, p50/p99).
Every phase is bounded by a count and a time budget, so the run ends by itself.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from _common import machine, percentile, rate
from kubernetes import client, watch

from engine.devcluster.cluster import DevCluster

APPLY = "application/apply-patch+yaml"
NAMESPACE = "bench"
OBJECTS = 1000  # ConfigMaps applied, then listed
DEPLOYMENTS = 300
GETS = 2000
LISTS = 30
LATENCY_WRITES = 500
WATCH_SECONDS = 300  # the watch's own timeout, beyond any phase


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


def main() -> None:
    started = time.perf_counter()
    facts = machine()
    with DevCluster(port=0) as cluster:
        figures = measure(cluster)
    figures = {"bench": "devcluster", "objects": OBJECTS, **facts, **figures,
               "wall_seconds": round(time.perf_counter() - started, 1)}
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
