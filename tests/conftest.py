"""Fixtures shared by every suite: a running dev cluster, official-client access to it, per-test namespaces.

- `devcluster`: one DevCluster per session, without simulators (conformance of the server itself).
- `simcluster`: one DevCluster per session with simulators on and one node (for e2e tests).
- `api_client` / `dynamic_client` / `kubeconfig`: the official client and a kubeconfig for `devcluster`.
- `namespace`: a fresh namespace in `devcluster` for one test, deleted afterwards.
- `wait_until(predicate, timeout=10)`: re-checks `predicate` on every committed change until it returns
  something truthy (which it returns) or the deadline passes (AssertionError).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from devcluster.helpers import make_api_client, wait_for
from kubernetes import client
from kubernetes.dynamic import DynamicClient

from engine.devcluster.cluster import DevCluster

T = TypeVar("T")


@pytest.fixture(scope="session")
def devcluster() -> Iterator[DevCluster]:
    with DevCluster(port=0) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def simcluster() -> Iterator[DevCluster]:
    with DevCluster(port=0, simulate=True, nodes=("node-1",)) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def kubeconfig(devcluster: DevCluster, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return devcluster.write_kubeconfig(tmp_path_factory.mktemp("kube") / "config")


@pytest.fixture(scope="session")
def api_client(devcluster: DevCluster) -> Iterator[client.ApiClient]:
    api = make_api_client(devcluster)
    yield api
    api.close()


@pytest.fixture(scope="session")
def dynamic_client(api_client: client.ApiClient, tmp_path_factory: pytest.TempPathFactory) -> DynamicClient:
    cache = tmp_path_factory.mktemp("discovery") / "cache.json"
    return DynamicClient(api_client, cache_file=str(cache))


@pytest.fixture
def namespace(devcluster: DevCluster) -> Iterator[str]:
    name = f"t-{uuid.uuid4().hex[:12]}"
    code, body = devcluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": name}})
    assert code == 201, body
    yield name
    devcluster.request("DELETE", f"/api/v1/namespaces/{name}")


@pytest.fixture
def wait_until(devcluster: DevCluster) -> Callable[..., Any]:
    def wait(predicate: Callable[[], T], timeout: float = 10.0) -> T:
        return wait_for(devcluster, predicate, timeout)
    return wait
