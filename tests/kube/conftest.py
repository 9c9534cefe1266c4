"""Fixtures of the engine.kube tests: Kubes connected to the session's dev cluster, and private faulty clusters."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.devcluster.cluster import DevCluster
from engine.kube import Kube, connect


@pytest.fixture
def kube(kubeconfig: Path, namespace: str) -> Iterator[Kube]:
    """A Kube on the session cluster whose default namespace is the test's own."""
    with connect(str(kubeconfig), namespace=namespace) as kube:
        yield kube


@pytest.fixture
def connect_kube(kubeconfig: Path, namespace: str) -> Iterator[Callable[[], Kube]]:
    """More Kubes on the session cluster, each with its own connections and counters."""
    made: list[Kube] = []

    def make() -> Kube:
        made.append(connect(str(kubeconfig), namespace=namespace))
        return made[-1]

    yield make
    for kube in made:
        kube.close()


@pytest.fixture
def own_cluster() -> Iterator[DevCluster]:
    """A cluster for this test alone, so it can inject faults (`own_cluster.faults = FaultProfile(...)`)."""
    with DevCluster(port=0) as cluster:
        yield cluster


@pytest.fixture
def own_kube(own_cluster: DevCluster, tmp_path: Path) -> Iterator[Kube]:
    with connect(str(own_cluster.write_kubeconfig(tmp_path / "own-kubeconfig"))) as kube:
        yield kube
