"""A leader cut off from the API server (engine.devcluster.partition's Tap) steps down within its renew deadline,
not after its requests time out, and every request its passes send through the fenced Kube stops with it: one
held by the partition is abandoned (and never lands once the partition heals), later ones are not sent."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from engine.devcluster.cluster import DevCluster
from engine.devcluster.partition import Tap
from engine.kube import Kube, LeaderElector, LeadershipLost, connect
from engine.kube.transport import REQUEST_TIMEOUT

from .helpers import WAIT, configmap, eventually

FAST = {"lease_duration": 2, "renew_deadline": 1.5, "retry_period": 0.1}
STEP_DOWN = REQUEST_TIMEOUT / 2  # well before a blocked request would time out by itself


@dataclass
class Leader:
    elector: LeaderElector
    kube: Kube
    tap: Tap
    stop: threading.Event = field(default_factory=threading.Event)
    started: threading.Event = field(default_factory=threading.Event)
    stopped: threading.Event = field(default_factory=threading.Event)


@pytest.fixture
def leader(own_cluster: DevCluster, tmp_path: Path) -> Iterator[Leader]:
    """Candidate "a", connected through a tap, leading the Lease of the test's own cluster."""
    with Tap.for_kubeconfig(own_cluster.write_kubeconfig(tmp_path / "cluster")) as tap, \
            connect(str(tap.write_kubeconfig(tmp_path / "tapped"))) as kube:
        elector = LeaderElector(kube, "kplan-manager", "default", "a", **FAST)  # type: ignore[arg-type]
        running = Leader(elector, kube, tap)
        thread = threading.Thread(target=elector.run, args=(running.started.set, running.stopped.set, running.stop),
                                  daemon=True)
        thread.start()
        assert running.started.wait(WAIT)
        kube.resource("v1", "ConfigMap")  # discovered before any cut, as a manager's kinds are
        yield running
        tap.heal()
        running.stop.set()
        thread.join(WAIT)
        assert not thread.is_alive()


def exists(cluster: DevCluster, name: str) -> bool:
    return cluster.request("GET", f"/api/v1/namespaces/default/configmaps/{name}")[0] == 200


def test_a_cut_off_leader_steps_down_within_its_renew_deadline(leader: Leader) -> None:
    leader.tap.cut()

    assert leader.stopped.wait(STEP_DOWN)  # its renewal, held by the partition, was abandoned at the deadline
    assert leader.tap.is_cut and not leader.elector.is_leader
    with pytest.raises(LeadershipLost):
        leader.kube.fenced(leader.elector.fence).create(configmap("after", "default"))


def test_a_write_held_by_the_partition_is_abandoned_and_never_lands(own_cluster: DevCluster, leader: Leader) -> None:
    writer = leader.kube.fenced(leader.elector.fence)
    leader.tap.cut_at_next_write()
    outcome: list[BaseException] = []

    def write() -> None:
        try:
            writer.create(configmap("held", "default"))
        except BaseException as err:
            outcome.append(err)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    thread.join(STEP_DOWN)

    assert leader.tap.is_cut and not thread.is_alive()
    assert [type(err) for err in outcome] == [LeadershipLost]
    leader.tap.heal()
    eventually(lambda: leader.tap.dropped >= 1)
    assert not exists(own_cluster, "held")


def test_a_leader_that_renews_keeps_its_fence_open(leader: Leader) -> None:
    writer = leader.kube.fenced(leader.elector.fence)
    renewals = leader.kube.requests["update"]
    eventually(lambda: leader.kube.requests["update"] >= renewals + 20)  # well past one renew deadline

    writer.create(configmap("while-leading", "default"))

    assert leader.elector.is_leader and not leader.stopped.is_set()
