"""The decode pre-checks of built-in bodies (bodycheck) find something exactly when the walks of `structural` do:
a type mismatch, or a field pruning would drop; checked on random changes of a Pod, a Deployment and a StatefulSet
(embedded PVC templates)."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from engine.apiserver import bodycheck, structural
from engine.apiserver.api import Api
from engine.apiserver.unchanged import NOTHING
from engine.apiserver.writes import schema_view

POD_SPEC: dict[str, Any] = {
    "containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}], "env": [{"name": "A", "value": "1"}],
                    "resources": {"limits": {"cpu": "1"}}}],
    "volumes": [{"name": "v", "configMap": {"name": "cm"}}]}
TEMPLATE = {"metadata": {"labels": {"a": "b"}}, "spec": POD_SPEC}
OBJECTS: dict[tuple[str, str], dict[str, Any]] = {
    ("v1", "Pod"): {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}}, "spec": POD_SPEC,
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                   "containerStatuses": [{"name": "c", "ready": True, "state": {"running": {"startedAt": "x"}}}]}},
    ("apps/v1", "Deployment"): {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}}, "template": TEMPLATE}},
    ("apps/v1", "StatefulSet"): {
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}}, "serviceName": "s", "template": TEMPLATE,
                 "volumeClaimTemplates": [{"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                                           "metadata": {"name": "data"},
                                           "spec": {"resources": {"requests": {"storage": "1Gi"}}}}]}},
}
VALUES = (None, 1, "s", True, 1.5, [], {}, {"x": 1}, [1, "a"], {"bogus": {"deep": 1}})
KEYS = ("bogus", "name", "metadata", "apiVersion", "kind", "labels", "image")


def changed(rnd: random.Random, obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` with a value replaced or a key set somewhere inside it."""
    obj = copy.deepcopy(obj)
    parent: Any = obj
    key: Any = rnd.choice(list(obj))
    while isinstance(parent[key], dict | list) and parent[key] and rnd.random() < 0.8:
        parent = parent[key]
        key = rnd.choice(list(parent)) if isinstance(parent, dict) else rnd.randrange(len(parent))
    if isinstance(parent[key], dict) and rnd.random() < 0.5:
        parent[key][rnd.choice(KEYS)] = rnd.choice(VALUES)
    else:
        parent[key] = rnd.choice(VALUES)
    return obj


@pytest.mark.parametrize("kind", list(OBJECTS))
def test_the_checks_find_what_the_walks_find(kind: tuple[str, str]) -> None:
    api = Api()
    view = schema_view(api, api.registry.by_kind(*kind))
    assert view is not None
    rnd = random.Random(7)
    found = {True: 0, False: 0}
    for _ in range(1500):
        obj = changed(rnd, OBJECTS[kind])
        mismatch = bodycheck.has_mismatch(view, obj, NOTHING)
        assert mismatch == bool(structural.type_mismatches(view, obj)), obj
        unknown = bodycheck.has_unknown(view, obj, NOTHING)
        assert unknown == bool(structural.prune(view, copy.deepcopy(obj))), obj
        found[mismatch or unknown] += 1
    assert found[True] and found[False]
