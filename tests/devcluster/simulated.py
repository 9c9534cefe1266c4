"""Support for the simulator tests: a simulated cluster per module, a namespace per test, builders and waits."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
from kubernetes import client, watch

from engine.devcluster.cluster import DevCluster

from .helpers import make_api_client, wait_for

T = TypeVar("T")
JsonDict = dict[str, Any]
WAIT = 20.0  # seconds any single condition may take before the test fails
NODES = ("node1", "node2")
DURATION = "devcluster.kplan.dev/duration"
FAIL = "devcluster.kplan.dev/fail"
MESSAGE = "devcluster.kplan.dev/termination-message-"


@dataclass(frozen=True)
class Sim:
    """One test's view of the simulated cluster: typed APIs over HTTP and a namespace of its own."""

    cluster: DevCluster
    api_client: client.ApiClient
    namespace: str

    @property
    def core(self) -> client.CoreV1Api:
        return client.CoreV1Api(self.api_client)

    @property
    def apps(self) -> client.AppsV1Api:
        return client.AppsV1Api(self.api_client)

    @property
    def batch(self) -> client.BatchV1Api:
        return client.BatchV1Api(self.api_client)

    def wait(self, predicate: Callable[[], T], timeout: float = WAIT) -> T:
        """`predicate`'s first truthy value, re-checked after every change the cluster commits."""
        return wait_for(self.cluster, predicate, timeout)

    def read(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> JsonDict:
        """The raw JSON an official-client read returns (so absent fields stay absent)."""
        answer: JsonDict = json.loads(method(*args, _preload_content=False, **kwargs).data)
        return answer

    def read_or_none(self, method: Callable[..., Any], *args: Any) -> JsonDict | None:
        try:
            return self.read(method, *args)
        except client.ApiException as e:
            if e.status == 404:
                return None
            raise

    def history(self, list_method: Callable[..., Any], name: str, since: str, until: Callable[[JsonDict], bool],
                timeout: float = WAIT) -> list[JsonDict]:
        """Every state of object `name` from resourceVersion `since` on, until one satisfies `until`."""
        seen: list[JsonDict] = []
        stream = watch.Watch()
        for event in stream.stream(list_method, self.namespace, resource_version=since,
                                   field_selector=f"metadata.name={name}", timeout_seconds=int(timeout)):
            obj: JsonDict = event["raw_object"]
            seen.append(obj)
            if until(obj):
                stream.stop()
                return seen
        raise AssertionError(f"{name} never reached the expected state; saw {len(seen)} states")

    def revision(self) -> str:
        """The current resourceVersion of the namespace's pods (a point to watch from)."""
        return str(self.core.list_namespaced_pod(self.namespace).metadata.resource_version)


def cluster_fixture(nodes: tuple[str, ...] = NODES) -> Any:
    @pytest.fixture(scope="module")
    def cluster() -> Iterator[DevCluster]:
        with DevCluster(port=0, simulate=True, nodes=nodes) as running:
            yield running
    return cluster


class Failures(logging.Handler):
    """Collects the errors the simulators log (a failed reconcile is logged, then retried)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def sim_fixture() -> Any:
    @pytest.fixture
    def sim(cluster: DevCluster) -> Iterator[Sim]:
        """A namespace of its own; the test fails if a simulator logged an error meanwhile."""
        name = f"s-{uuid.uuid4().hex[:10]}"
        code, body = cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": name}})
        assert code == 201, body
        api = make_api_client(cluster)
        failures = Failures()
        logger = logging.getLogger("engine.simulators")
        logger.addHandler(failures)
        try:
            yield Sim(cluster, api, name)
        finally:
            logger.removeHandler(failures)
            api.close()
            cluster.request("DELETE", f"/api/v1/namespaces/{name}")
        assert [r.getMessage() for r in failures.records] == []
    return sim


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def conditions(obj: JsonDict | None) -> dict[str, JsonDict]:
    """The object's status conditions by type."""
    return {c["type"]: c for c in ((obj or {}).get("status") or {}).get("conditions") or []}


def condition_is(obj: JsonDict | None, type_: str, status: str = "True") -> bool:
    return conditions(obj).get(type_, {}).get("status") == status


def container(name: str = "main", image: str = "busybox:1.36") -> JsonDict:
    return {"name": name, "image": image}


def pod(name: str, *, restart: str = "Always", notes: JsonDict | None = None, node_selector: JsonDict | None = None,
        affinity: JsonDict | None = None, volumes: list[JsonDict] | None = None) -> JsonDict:
    spec: JsonDict = {"restartPolicy": restart, "containers": [container()]}
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity:
        spec["affinity"] = affinity
    if volumes:
        spec["volumes"] = volumes
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": notes or {}}, "spec": spec}


def deployment(name: str, replicas: int = 2, *, notes: JsonDict | None = None, image: str = "nginx:1.27",
               deadline: int | None = None) -> JsonDict:
    labels = {"app": name}
    spec: JsonDict = {"replicas": replicas, "selector": {"matchLabels": labels},
                      "template": {"metadata": {"labels": labels}, "spec": {"containers": [container("web", image)]}}}
    if deadline is not None:
        spec["progressDeadlineSeconds"] = deadline
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "annotations": notes or {}},
            "spec": spec}


def statefulset(name: str, replicas: int = 2, *, image: str = "nginx:1.27", claims: bool = False) -> JsonDict:
    labels = {"app": name}
    spec: JsonDict = {"replicas": replicas, "serviceName": name, "selector": {"matchLabels": labels},
                      "template": {"metadata": {"labels": labels}, "spec": {"containers": [container("db", image)]}}}
    if claims:
        spec["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}}}]
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name}, "spec": spec}


def daemonset(name: str, node_selector: JsonDict) -> JsonDict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"nodeSelector": node_selector, "containers": [container("agent")]}}}}


def job(name: str, *, notes: JsonDict | None = None, template_notes: JsonDict | None = None,
        node_selector: JsonDict | None = None, affinity: JsonDict | None = None, **spec: Any) -> JsonDict:
    pod_spec: JsonDict = {"restartPolicy": "Never", "containers": [container()]}
    if node_selector:
        pod_spec["nodeSelector"] = node_selector
    if affinity:
        pod_spec["affinity"] = affinity
    template: JsonDict = {"spec": pod_spec}
    if template_notes:
        template["metadata"] = {"annotations": template_notes}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "annotations": notes or {}},
            "spec": {**spec, "template": template}}


def required_affinity(key: str, *values: str) -> JsonDict:
    term = {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}


def label_node(sim: Sim, node: str, labels: dict[str, str | None]) -> None:
    sim.core.patch_node(node, {"metadata": {"labels": labels}})


def managers(obj: JsonDict) -> set[tuple[str, str]]:
    """(manager, subresource) of every managedFields entry."""
    return {(e["manager"], e.get("subresource", "")) for e in obj["metadata"].get("managedFields") or []}
