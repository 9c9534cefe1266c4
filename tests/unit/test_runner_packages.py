"""PackageCache, the runner's parsed packages: one parse per OperatorVersion version, shared by concurrent callers;
an invalid version is refused each time and kept by no one."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from engine.errors import PackageInvalid
from engine.runner.packages import PackageCache

OPERATOR = "apiVersion: kplan.dev/v1alpha1\nname: demo\noperatorVersion: 0.1.0\ntasks:\n  - {name: a, kind: Apply, spec: {resources: [a.yaml]}}\nplans:\n  deploy:\n    phases:\n      - name: main\n        steps:\n          - {name: a, tasks: [a]}\n"  # noqa: E501
PARAMS = "apiVersion: kplan.dev/v1alpha1\nparameters: []\n"
TEMPLATE = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ Name }}\n"


def operator_version(version: str = "1", operator: str = OPERATOR) -> dict[str, Any]:
    files = {"operator.yaml": operator, "params.yaml": PARAMS, "templates/a.yaml": TEMPLATE}
    return {"apiVersion": "kplan.dev/v1alpha1", "kind": "OperatorVersion",
            "metadata": {"name": "demo-0.1.0", "namespace": "shop", "uid": "ov-uid", "resourceVersion": version},
            "spec": {"files": files}}


def test_each_version_is_parsed_once() -> None:
    cache = PackageCache()
    first = cache.package(operator_version("1"))

    assert first.name == "demo" and cache.package(operator_version("1")) is first
    assert cache.package(operator_version("2")) == first  # parsed for its own version: the same files, so equal
    assert len(cache) == 2


def test_an_invalid_version_is_refused_each_time() -> None:
    cache = PackageCache()
    for _ in range(2):
        with pytest.raises(PackageInvalid):
            cache.package(operator_version("4", operator="name: [unclosed"))
    assert len(cache) == 0


def test_concurrent_callers_of_one_version_share_one_parse() -> None:
    cache = PackageCache()
    start = threading.Barrier(4)
    found: list[object] = []

    def ask() -> None:
        start.wait()
        found.append(cache.package(operator_version("7")))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(found) == 4 and all(pkg is found[0] for pkg in found)
