"""Builders of small objects and a CRD for the engine.kube tests, and a queue that collects cache events."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from engine.kube import Kube

WAIT = 20.0  # seconds any single condition in these tests may take before the test fails


def configmap(name: str, namespace: str, data: dict[str, str] | None = None, **labels: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data or {}}


def deployment(name: str, namespace: str, replicas: int = 1) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
            },
        },
    }


def crd(group: str, kind: str, *, status: bool = True) -> dict[str, Any]:
    """A namespaced CRD `kind` in `group`/v1 whose spec and status take any fields."""
    plural = kind.lower() + "s"
    open_object = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    version: dict[str, Any] = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": open_object, "status": open_object}}},
    }
    if status:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
            "versions": [version],
        },
    }


def established(obj: dict[str, Any] | None) -> bool:
    conditions = ((obj or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def install_crd(kube: Kube, definition: dict[str, Any]) -> None:
    kube.apply(definition)
    kube.wait_for("apiextensions.k8s.io/v1", "CustomResourceDefinition", definition["metadata"]["name"], None,
                  established, WAIT, condition="Established")


class Changes:
    """Collects (type, object) pairs from cache handlers; `expect` waits for one that matches."""

    def __init__(self) -> None:
        self.queue: queue.Queue[tuple[str, dict[str, Any]]] = queue.Queue()

    def __call__(self, change: str, obj: dict[str, Any]) -> None:
        self.queue.put((change, obj))

    def expect(self, match: Callable[[str, dict[str, Any]], bool], timeout: float = WAIT) -> dict[str, Any]:
        """The object of the first collected change that matches; fails after `timeout` seconds."""
        seen = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                change, obj = self.queue.get(timeout=max(deadline - time.monotonic(), 0.001))
            except queue.Empty:
                raise AssertionError(f"no matching change within {timeout}s; saw {seen}") from None
            seen.append((change, obj["metadata"]["name"]))
            if match(change, obj):
                return obj


def named(change: str, name: str, **data: str) -> Callable[[str, dict[str, Any]], bool]:
    """A matcher for `change` of the object `name` (and, for ConfigMaps, with `data` among its data)."""
    def match(seen: str, obj: dict[str, Any]) -> bool:
        has_data = all((obj.get("data") or {}).get(k) == v for k, v in data.items())
        return seen == change and obj["metadata"]["name"] == name and has_data

    return match


def eventually(condition: Callable[[], bool], timeout: float = WAIT) -> None:
    """Wait until `condition()` holds, checking every few milliseconds; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition still false after {timeout}s")
        pause.wait(0.02)
