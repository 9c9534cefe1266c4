"""Kube.watch: changes after a resourceVersion, deadlines, stop from another thread, resuming after cuts."""

from __future__ import annotations

import itertools
import threading

import pytest

from engine.apiserver.faults import FaultProfile, WatchCut
from engine.devcluster.cluster import DevCluster
from engine.kube import Expired, Kube

from .helpers import WAIT, configmap


def test_watch_yields_the_changes_after_the_listed_version(kube: Kube, namespace: str) -> None:
    _, version = kube.list_with_version("v1", "ConfigMap", namespace)
    kube.create(configmap("a", namespace))
    kube.patch("v1", "ConfigMap", "a", namespace, {"data": {"x": "1"}})
    kube.delete("v1", "ConfigMap", "a", namespace)

    with kube.watch("v1", "ConfigMap", namespace=namespace, resource_version=version, timeout=WAIT) as changes:
        seen = [(change, obj["metadata"]["name"]) for change, obj in itertools.islice(changes, 3)]

    assert seen == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]


def test_watch_filters_by_label(kube: Kube, namespace: str) -> None:
    _, version = kube.list_with_version("v1", "ConfigMap", namespace)
    kube.create(configmap("other", namespace, tier="db"))
    kube.create(configmap("mine", namespace, tier="web"))

    with kube.watch("v1", "ConfigMap", namespace=namespace, label_selector="tier=web", resource_version=version,
                    timeout=WAIT) as changes:
        change, obj = next(changes)

    assert (change, obj["metadata"]["name"]) == ("ADDED", "mine")


def test_a_watch_with_a_timeout_ends_when_nothing_happens(kube: Kube, namespace: str) -> None:
    _, version = kube.list_with_version("v1", "ConfigMap", namespace)

    with kube.watch("v1", "ConfigMap", namespace=namespace, resource_version=version, timeout=1) as changes:
        assert list(changes) == []


def test_stop_from_another_thread_ends_a_blocked_watch(kube: Kube, namespace: str) -> None:
    _, version = kube.list_with_version("v1", "ConfigMap", namespace)
    watch = kube.watch("v1", "ConfigMap", namespace=namespace, resource_version=version)
    opened = threading.Event()
    seen: list[str] = []

    def follow() -> None:
        for change, _ in watch:
            seen.append(change)
            opened.set()

    reader = threading.Thread(target=follow, daemon=True)
    reader.start()
    kube.create(configmap("a", namespace))
    assert opened.wait(WAIT)

    watch.stop()
    reader.join(WAIT)

    assert not reader.is_alive()
    assert seen == ["ADDED"]


@pytest.mark.parametrize("cut", [WatchCut.CLOSE, WatchCut.END])
def test_a_watch_resumes_where_it_was_cut(own_cluster: DevCluster, own_kube: Kube, cut: WatchCut) -> None:
    own_cluster.faults = FaultProfile(watch_max_events=1, watch_cut=cut)
    _, version = own_kube.list_with_version("v1", "ConfigMap", "default")
    for name in "abc":
        own_kube.create(configmap(name, "default"))

    with own_kube.watch("v1", "ConfigMap", namespace="default", resource_version=version, timeout=WAIT) as changes:
        seen = [(change, obj["metadata"]["name"]) for change, obj in itertools.islice(changes, 3)]

    assert seen == [("ADDED", "a"), ("ADDED", "b"), ("ADDED", "c")]
    assert own_kube.requests["watch"] >= 3


def test_a_watch_from_an_expired_version_raises_expired(own_cluster: DevCluster, own_kube: Kube) -> None:
    own_cluster.faults = FaultProfile(expire_next_watch=True)
    _, version = own_kube.list_with_version("v1", "ConfigMap", "default")

    with pytest.raises(Expired), own_kube.watch("v1", "ConfigMap", resource_version=version, timeout=WAIT) as changes:
        next(changes)
