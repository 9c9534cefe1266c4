"""Helpers of the conformance suite: raw HTTP, waiting on cluster changes, and object builders."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode

from kubernetes import client
from kubernetes import config as kube_config

from engine.devcluster.backends import Cluster
from engine.devcluster.real import RealCluster

T = TypeVar("T")
# Seconds between re-checks when nothing the cluster's feed reports has changed: a real backend's feed covers the
# kinds tests look at, not every kind, so a condition on another kind is still seen within this.
RECHECK = 1.0


def make_api_client(cluster: Cluster) -> client.ApiClient:
    """The official client on either backend, configured from the cluster's own kubeconfig."""
    configuration = client.Configuration()
    with tempfile.TemporaryDirectory(prefix="kplan-client-") as folder:  # the client keeps what it read
        kube_config.load_kube_config(str(cluster.write_kubeconfig(Path(folder) / "config")),
                                     client_configuration=configuration)
    return client.ApiClient(configuration)


def wait_for(cluster: Cluster, predicate: Callable[[], T], timeout: float = 10.0) -> T:
    """Evaluate `predicate` now and after each change the cluster commits, until it is truthy."""
    changed = threading.Condition()

    def on_event(_type: str, _obj: dict[str, Any]) -> None:
        with changed:
            changed.notify_all()

    unsubscribe = cluster.subscribe(on_event)
    deadline = time.monotonic() + timeout
    try:
        with changed:
            while True:
                result = predicate()
                if result:
                    return result
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"condition not met within {timeout}s")
                changed.wait(min(remaining, RECHECK))
    finally:
        unsubscribe()


CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def delete_namespace(cluster: Cluster, namespace: str) -> None:
    """Delete a test's namespace, and let go of the kplan Instances the test left in it: their `kplan.dev/cleanup`
    finalizer waits for a manager that has stopped, so they would hold the namespace Terminating for good (and a
    real namespace controller retrying on it for the rest of the session)."""
    cluster.request("DELETE", f"/api/v1/namespaces/{namespace}")
    path = f"/apis/kplan.dev/v1alpha1/namespaces/{namespace}/instances"
    code, body = cluster.request("GET", path)
    if code != 200:  # kplan's CRDs are not installed in this cluster
        return
    for item in body["items"]:
        if item["metadata"].get("finalizers"):
            cluster.request("PATCH", f"{path}/{item['metadata']['name']}", body={"metadata": {"finalizers": None}},
                            content_type="application/merge-patch+json")


def create_crd(cluster: Cluster, crd: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
    """Create a CRD and return it once it is Established and its resource is served (a real API server takes a
    moment for both; the dev cluster does both at once)."""
    code, body = cluster.request("POST", CRDS, body=crd)
    assert code == 201, body
    spec = crd["spec"]
    version = next(v["name"] for v in spec["versions"] if v.get("served", True))
    collection = f"/apis/{spec['group']}/{version}/{spec['names']['plural']}"

    def served() -> dict[str, Any] | None:
        found = cluster.request("GET", f"{CRDS}/{body['metadata']['name']}")[1]
        conditions = {c["type"]: c["status"] for c in (found.get("status") or {}).get("conditions") or []}
        return found if conditions.get("Established") == "True" and cluster.request(
            "GET", collection)[0] == 200 else None

    return wait_for(cluster, served, timeout)


WIDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "integer", "minimum": 1, "maximum": 10},
                "replicas": {"type": "integer", "default": 1},
                "color": {"type": "string", "enum": ["red", "blue"]},
                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                          "items": {"type": "object", "required": ["name"],
                                    "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
                "tags": {"type": "array", "items": {"type": "string"}},
                "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "selector": {"type": "string"},
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "phase": {"type": "string"},
                "replicas": {"type": "integer"},
                "conditions": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
                               "items": {"type": "object", "required": ["type"],
                                         "properties": {"type": {"type": "string"}, "status": {"type": "string"}}}},
            },
        },
    },
}


def widget_crd(group: str, *, status: bool = True, scale: bool = True, columns: bool = True) -> dict[str, Any]:
    subresources: dict[str, Any] = {}
    if status:
        subresources["status"] = {}
    if scale:
        subresources["scale"] = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas",
                                 "labelSelectorPath": ".spec.selector"}
    version: dict[str, Any] = {"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": WIDGET_SCHEMA}, "subresources": subresources}
    if columns:
        version["additionalPrinterColumns"] = [
            {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
            {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ]
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"widgets.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList",
                               "shortNames": ["wd"]},
                     "versions": [version]}}


@dataclass(frozen=True)
class Response:
    status: int
    headers: http.client.HTTPMessage
    body: Any
    raw: bytes = b""


def connection(cluster: Cluster, timeout: float = 30) -> http.client.HTTPConnection:
    """A raw HTTP connection to the cluster: HTTPS with the admin's certificate on the real backend."""
    if isinstance(cluster, RealCluster):
        return http.client.HTTPSConnection("127.0.0.1", cluster.port, timeout=timeout,
                                           context=cluster.plane.ssl_context())
    return http.client.HTTPConnection("127.0.0.1", cluster.port, timeout=timeout)


def http_call(cluster: Cluster | int, method: str, path: str, *, body: Any = None,
              query: dict[str, str] | None = None, headers: dict[str, str] | None = None,
              content_type: str = "application/json") -> Response:
    """One raw HTTP exchange, for what the typed client hides (headers, exact bodies, odd content types)."""
    conn = http.client.HTTPConnection("127.0.0.1", cluster, timeout=30) if isinstance(cluster, int) \
        else connection(cluster)
    try:
        payload = body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else None)
        sent = {"Content-Type": content_type, **(headers or {})}
        conn.request(method, path + ("?" + urlencode(query) if query else ""), body=payload, headers=sent)
        resp = conn.getresponse()
        raw = resp.read()
        try:
            decoded = json.loads(raw) if raw else None
        except ValueError:
            decoded = raw
        return Response(resp.status, resp.headers, decoded, raw)
    finally:
        conn.close()


def widget(name: str, size: int = 3, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "", "kind": "Widget", "metadata": {"name": name}, "spec": {"size": size, **spec}}


def configmap(name: str, data: dict[str, str] | None = None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data or {}}


def deployment(name: str, replicas: int = 1, image: str = "nginx:1.27") -> dict[str, Any]:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "main", "image": image}]}}}}


@contextlib.contextmanager
def served_by_the_cli(tmp_path: Path, *flags: str) -> Iterator[int]:
    """`kplan devcluster` in a subprocess: checks what it prints, yields its port, and expects exit 0 on SIGTERM.
    The kubeconfig it writes is `tmp_path / "kc.yaml"`."""
    kubeconfig = tmp_path / "kc.yaml"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli.main", "devcluster", *flags,
                             "--kubeconfig", str(kubeconfig)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        second = proc.stdout.readline()
        assert first.startswith("dev cluster listening on http://127.0.0.1:")
        assert second.strip() == f"export KUBECONFIG={kubeconfig}"
        yield int(first.split()[-1].rsplit(":", 1)[1])
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
