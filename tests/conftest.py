"""Fixtures shared by every suite: a running cluster of each backend, official-client access, per-test namespaces.

Backends: every test that uses `devcluster` or `simcluster` runs once per backend — `dev` (kplan's in-memory
API server) and `real` (the real control plane `make control-plane` builds) — except in modules marked
`pytest.mark.dev_only("why")` or `real_only("why")` (their docstring says why) and in tests/kube (engine.kube's
own tests, many with the dev cluster's fault injection; the e2e suite covers engine.kube on the real backend).
KPLAN_TEST_BACKENDS (default "dev,real") narrows the list for a quick local run; CI runs both.

- `backend`: "dev" or "real", the session cluster's backend.
- `devcluster`: one cluster per session and backend, without simulators (conformance of the server itself).
- `simcluster`: one cluster per session and backend with simulators on and one node (for e2e tests).
- `api_client` / `dynamic_client` / `kubeconfig`: the official client and a kubeconfig for `devcluster`.
- `namespace`: a fresh namespace in `devcluster` for one test, deleted afterwards.
- `wait_until(predicate, timeout=10)`: re-checks `predicate` on every committed change until it returns
  something truthy (which it returns) or the deadline passes (AssertionError).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from devcluster.helpers import delete_namespace, make_api_client, wait_for
from kubernetes import client
from kubernetes.dynamic import DynamicClient

from engine.devcluster import backends
from engine.devcluster.backends import Cluster

T = TypeVar("T")
BACKENDS = tuple(b.strip() for b in os.environ.get("KPLAN_TEST_BACKENDS", "dev,real").split(",") if b.strip())
DEV_ONLY_TREES = ("kube",)  # test folders whose tests run on the dev backend only (see the docstring)


def backends_for(metafunc: pytest.Metafunc) -> tuple[str, ...]:
    for name, only in (("dev_only", "dev"), ("real_only", "real")):
        marker = metafunc.definition.get_closest_marker(name)
        if marker is not None:
            assert marker.args and str(marker.args[0]).strip(), f"{metafunc.definition.nodeid}: {name} needs a reason"
            return (only,) if only in BACKENDS else ()
    if metafunc.definition.path.parent.name in DEV_ONLY_TREES:
        return ("dev",)
    unknown = set(BACKENDS) - set(backends.BACKENDS)
    assert not unknown, f"KPLAN_TEST_BACKENDS names unknown backends {sorted(unknown)}"
    return BACKENDS


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", backends_for(metafunc), indirect=True, scope="session")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`dev_differs("difference")`: the test asserts what the real server does and the dev cluster does not do yet
    (a known difference, listed in docs/architecture.md): its dev run is expected to fail, and fails the suite
    the moment the dev cluster agrees (strict), so the marker goes when the difference does."""
    for item in items:
        marker = item.get_closest_marker("dev_differs")
        callspec = getattr(item, "callspec", None)
        if marker is not None and callspec is not None and callspec.params.get("backend") == "dev":
            item.add_marker(pytest.mark.xfail(strict=True, reason=f"known difference: {marker.args[0]}"))


@pytest.fixture(scope="session")
def backend(request: pytest.FixtureRequest) -> str:
    return str(getattr(request, "param", "dev"))


@pytest.fixture(scope="session")
def devcluster(backend: str) -> Iterator[Cluster]:
    with backends.new(backend, simulate=False) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def simcluster(backend: str) -> Iterator[Cluster]:
    with backends.new(backend, simulate=True, nodes=("node-1",)) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def kubeconfig(devcluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return devcluster.write_kubeconfig(tmp_path_factory.mktemp("kube") / "config")


@pytest.fixture(scope="session")
def api_client(devcluster: Cluster) -> Iterator[client.ApiClient]:
    api = make_api_client(devcluster)
    yield api
    api.close()


@pytest.fixture(scope="session")
def dynamic_client(api_client: client.ApiClient, tmp_path_factory: pytest.TempPathFactory) -> DynamicClient:
    cache = tmp_path_factory.mktemp("discovery") / "cache.json"
    return DynamicClient(api_client, cache_file=str(cache))


@pytest.fixture
def namespace(devcluster: Cluster) -> Iterator[str]:
    name = f"t-{uuid.uuid4().hex[:12]}"
    code, body = devcluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": name}})
    assert code == 201, body
    if devcluster.backend == "real":  # pods are admitted once the ServiceAccount controller made `default`
        wait_for(devcluster, lambda: devcluster.request(
            "GET", f"/api/v1/namespaces/{name}/serviceaccounts/default")[0] == 200, 30)
    yield name
    delete_namespace(devcluster, name)


@pytest.fixture
def wait_until(devcluster: Cluster) -> Callable[..., Any]:
    def wait(predicate: Callable[[], T], timeout: float = 10.0) -> T:
        return wait_for(devcluster, predicate, timeout)
    return wait
