"""Tap (engine/devcluster/partition.py), the partition soak's proxy: it forwards requests and watch streams as
they come, records each request it forwarded, holds everything while cut, and on heal delivers what a waiting
client sent but drops what a client gave up on."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.devcluster.cluster import DevCluster
from engine.devcluster.partition import Tap
from engine.kube import Kube, connect

WAIT = 20.0


@pytest.fixture
def tapped(tmp_path: Path) -> Iterator[tuple[DevCluster, Tap, Kube]]:
    with DevCluster(port=0) as cluster, Tap.for_kubeconfig(cluster.write_kubeconfig(tmp_path / "k")) as tap, \
            connect(str(tap.write_kubeconfig(tmp_path / "tapped"))) as kube:
        kube.resource("v1", "ConfigMap")
        yield cluster, tap, kube


def configmap(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}


def test_requests_pass_and_are_recorded_as_writes_or_reads(tapped: tuple[DevCluster, Tap, Kube]) -> None:
    _, tap, kube = tapped
    kube.create(configmap("a"))
    assert kube.get("v1", "ConfigMap", "a", "default") is not None

    recorded = [(s.method, s.status, s.write) for s in tap.sent if "/configmaps" in s.path]
    assert recorded == [("POST", 201, True), ("GET", 200, False)]


def test_a_watch_streams_through_the_tap(tapped: tuple[DevCluster, Tap, Kube]) -> None:
    cluster, _, kube = tapped
    _, version = kube.list_with_version("v1", "ConfigMap", "default")
    seen = threading.Event()

    def follow() -> None:
        for change, obj in kube.watch("v1", "ConfigMap", namespace="default", resource_version=version, timeout=WAIT):
            if change == "ADDED" and obj["metadata"]["name"] == "streamed":
                seen.set()
                return

    threading.Thread(target=follow, daemon=True).start()
    cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=configmap("streamed"))
    assert seen.wait(WAIT)


def test_a_request_held_by_a_cut_is_delivered_at_heal_while_its_client_waits(
    tapped: tuple[DevCluster, Tap, Kube]
) -> None:
    cluster, tap, kube = tapped
    tap.cut_at_next_write()
    done = threading.Event()
    threading.Thread(target=lambda: (kube.create(configmap("late")), done.set()), daemon=True).start()

    def cluster_saw() -> bool:
        return cluster.request("GET", "/api/v1/namespaces/default/configmaps/late")[0] == 200

    assert not done.wait(1.0) and tap.is_cut and not cluster_saw()  # held (a second of it), not lost
    tap.heal()
    assert done.wait(WAIT) and cluster_saw() and tap.dropped == 0
