"""A write's parts identical to the stored object become the stored parts themselves (`Unchanged`, `share`): on many
random writes of built-in kinds and of a custom resource (PUTs of the main endpoint and of status, merge, JSON and
strategic merge patches, applies), the answers are those of the writes that share nothing, and no stored version
of an object ever changes after it was committed."""

from __future__ import annotations

import copy
import marshal
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest

from engine.apiserver import crds, patching
from engine.apiserver import writes as writes_module
from engine.apiserver.unchanged import Unchanged
from engine.devcluster.cluster import DevCluster

NS = "default"
POD = f"/api/v1/namespaces/{NS}/pods/p"
DEPLOYMENT = f"/apis/apps/v1/namespaces/{NS}/deployments/d"
WIDGET = f"/apis/example.com/v1/namespaces/{NS}/widgets/w"
MERGE, JSON_PATCH, STRATEGIC = ("application/merge-patch+json", "application/json-patch+json",
                                "application/strategic-merge-patch+json")
APPLY = "application/apply-patch+yaml"
VOLATILE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})$")  # times, uids
WIDGETS_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                               "spec": {"type": "object", "properties": {
                                   "items": {"type": "array", "x-kubernetes-list-type": "map",
                                             "x-kubernetes-list-map-keys": ["name"],
                                             "items": {"type": "object", "required": ["name"], "properties": {
                                                 "name": {"type": "string"},
                                                 "size": {"type": "integer", "default": 1}}}},
                                   "mode": {"type": "string", "enum": ["a", "b"]}}},
                               "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}}


def container(rnd: random.Random, name: str) -> dict[str, Any]:
    found: dict[str, Any] = {"name": name, "image": rnd.choice(["busybox:1.36", "nginx:1.27"])}
    if rnd.random() < 0.5:
        found["env"] = [{"name": f"E{i}", "value": str(rnd.randrange(3))} for i in range(rnd.randrange(3))]
    if rnd.random() < 0.4:
        found["resources"] = {"limits": {"cpu": rnd.choice(["500m", "1", "1000m"])}}
    return found


def pod_status(rnd: random.Random) -> dict[str, Any]:
    conditions = [{"type": t, "status": rnd.choice(["True", "False"])}
                  for t in ("PodScheduled", "Initialized", "Ready") if rnd.random() < 0.6]
    return {"phase": rnd.choice(["Pending", "Running"]), "conditions": conditions,
            "containerStatuses": [{"name": "main", "image": "busybox:1.36", "imageID": "", "ready": rnd.random() < .5,
                                   "restartCount": rnd.randrange(2), "started": True,
                                   "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]}


def writes(rnd: random.Random, live: dict[str, dict[str, Any]]) -> Iterator[tuple[str, str, Any, str]]:
    """Random writes (method, path, body, content type) on the current objects `live` (changed by the caller)."""
    while True:
        pod, deployment, widget = live["pod"], live["deployment"], live["widget"]
        choice = rnd.randrange(11)
        if choice == 0:
            yield "PUT", POD + "/status", {**pod, "status": pod_status(rnd)}, "application/json"
        elif choice == 1:
            labels = {f"l{i}": str(rnd.randrange(2)) for i in range(rnd.randrange(3))}
            yield "PATCH", POD, {"metadata": {"labels": labels or None}}, MERGE
        elif choice == 2:
            body = copy.deepcopy(pod)
            body["spec"]["containers"][0]["image"] = rnd.choice(["busybox:1.36", "nginx:1.27"])
            yield "PUT", POD, body, "application/json"
        elif choice == 3:
            yield "PATCH", POD, [{"op": "add", "path": "/metadata/annotations", "value": {"a": str(rnd.random())}}], \
                JSON_PATCH
        elif choice == 4:
            image = rnd.choice(["busybox:1.36", "nginx:1.27"])
            yield "PATCH", POD, {"spec": {"containers": [{"name": "main", "image": image}]}}, STRATEGIC
        elif choice == 5:
            body = copy.deepcopy(deployment)
            spec = body["spec"]
            spec["replicas"] = rnd.randrange(4)
            if rnd.random() < 0.5:
                spec["template"]["spec"]["containers"] = [container(rnd, "main"), *(
                    [container(rnd, "side")] if rnd.random() < 0.5 else [])]
            yield "PUT", DEPLOYMENT, body, "application/json"
        elif choice == 6:
            status = {"replicas": rnd.randrange(3), "observedGeneration": 1,
                      "conditions": [{"type": "Available", "status": rnd.choice(["True", "False"])}]}
            yield "PUT", DEPLOYMENT + "/status", {**deployment, "status": status}, "application/json"
        elif choice == 7:
            yield "PATCH", DEPLOYMENT, {"spec": {"template": {"spec": {"containers": [container(rnd, "main")]}}}}, \
                STRATEGIC
        elif choice == 8:
            body = copy.deepcopy(widget)
            items = body["spec"]["items"]
            if items and rnd.random() < 0.4:
                items.pop(rnd.randrange(len(items)))
            else:
                items.insert(rnd.randrange(len(items) + 1), {"name": f"i{rnd.randrange(6)}"})
            body["spec"]["mode"] = rnd.choice(["a", "b", "c"])
            yield "PUT", WIDGET, body, "application/json"
        elif choice == 9:
            yield "PUT", WIDGET + "/status", {**widget, "status": {"seen": rnd.randrange(3)}}, "application/json"
        else:
            config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                      "spec": {"replicas": rnd.randrange(1, 3)}}
            yield "PATCH", DEPLOYMENT, config, APPLY


def seed(cluster: DevCluster) -> None:
    template = {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]}}
    for path, body in (
            (f"/api/v1/namespaces/{NS}/pods", {"metadata": {"name": "p"}, "spec": {"containers": [
                {"name": "main", "image": "busybox:1.36", "resources": {"limits": {"cpu": "1"}}}]}}),
            (f"/apis/apps/v1/namespaces/{NS}/deployments",
             {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": template}}),
            ("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", WIDGETS_CRD)):
        code, answer = cluster.request("POST", path, body=body, query={"fieldManager": "seed"})
        assert code == 201, answer


def normal(value: Any) -> Any:
    """The answer without what differs between two clusters (uids, times)."""
    if isinstance(value, dict):
        return {k: normal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normal(v) for v in value]
    return "<volatile>" if isinstance(value, str) and VOLATILE.match(value) else value


def run(count: int, monkeypatch: pytest.MonkeyPatch, share: bool) -> list[Any]:
    """The normalised answers of `count` random writes, made at one moment (managedFields are sorted by time)."""
    for module in (writes_module, patching, crds):
        monkeypatch.setattr(module, "now", lambda: "2026-01-01T00:00:00Z")
    if not share:
        whole = Unchanged.__init__
        monkeypatch.setattr(Unchanged, "__init__", lambda self, new, old, known=None, share=False:
                            whole(self, new, old, known))
    rnd = random.Random(7)
    answers: list[Any] = []
    with DevCluster() as cluster:
        seed(cluster)
        code, _ = cluster.request("POST", f"/apis/example.com/v1/namespaces/{NS}/widgets",
                                  body={"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                                        "spec": {"items": [{"name": "i0"}], "mode": "a"}})
        assert code == 201
        snapshots: list[tuple[Any, bytes]] = []  # every committed version, as it was when committed
        cluster.subscribe(lambda _type, obj: snapshots.append((obj, marshal.dumps(obj, 2))), inline=True, shared=True)
        live: dict[str, dict[str, Any]] = {}
        stream = writes(rnd, live)
        for _ in range(count):
            for name, path in (("pod", POD), ("deployment", DEPLOYMENT), ("widget", WIDGET)):
                live[name] = cluster.request("GET", path)[1]
            method, path, body, content_type = next(stream)
            code, answer = cluster.request(method, path, body=body, content_type=content_type,
                                           query={"fieldManager": f"m{rnd.randrange(3)}"})
            answers.append((method, path, code, normal(answer)))
            for obj, snapshot in snapshots:
                assert marshal.dumps(obj, 2) == snapshot, f"a stored version changed after {method} {path}"
    return answers


def test_writes_that_share_stored_parts_answer_as_writes_that_share_none(monkeypatch: pytest.MonkeyPatch) -> None:
    shared = run(300, monkeypatch, share=True)
    assert sum(1 for *_, code, _ in shared if code == 200) > 200
    assert shared == run(300, monkeypatch, share=False)
