"""Fixtures of the dev cluster conformance suite: typed APIs, raw HTTP, private clusters and a Widget CRD."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client

from engine.devcluster.cluster import DevCluster

from .helpers import Response, create_crd, http_call, widget_crd


@pytest.fixture
def http(devcluster: DevCluster) -> Callable[..., Response]:
    def call(method: str, path: str, **kwargs: Any) -> Response:
        return http_call(devcluster, method, path, **kwargs)
    return call


@pytest.fixture(scope="session")
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture(scope="session")
def apps(api_client: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api_client)


@pytest.fixture(scope="session")
def custom(api_client: client.ApiClient) -> client.CustomObjectsApi:
    return client.CustomObjectsApi(api_client)


@pytest.fixture
def own_cluster_factory() -> Iterator[Callable[..., DevCluster]]:
    """Private clusters (e.g. a short watch history or faults) stopped after the test."""
    started: list[DevCluster] = []

    def make(**kwargs: Any) -> DevCluster:
        cluster = DevCluster(**kwargs).start()
        started.append(cluster)
        return cluster

    yield make
    for cluster in started:
        cluster.stop()


@pytest.fixture
def widget_group(devcluster: DevCluster) -> Iterator[str]:
    """A Widget CRD in a group of its own (status and scale subresources, printer columns)."""
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    create_crd(devcluster, widget_crd(group))
    yield group
    devcluster.request("DELETE", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}")
