"""LeaderElector: one leader among candidates, takeover when the leader stops renewing, hand-back on stop."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from engine.kube import Kube, LeaderElector

from .helpers import WAIT, eventually

FAST = {"lease_duration": 2, "renew_deadline": 1.5, "retry_period": 0.1}


@dataclass
class Candidate:
    elector: LeaderElector
    kube: Kube
    stop: threading.Event = field(default_factory=threading.Event)
    started: threading.Event = field(default_factory=threading.Event)
    stopped: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def campaign(self) -> None:
        self.thread = threading.Thread(
            target=self.elector.run, args=(self.started.set, self.stopped.set, self.stop), daemon=True
        )
        self.thread.start()

    def quit(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(WAIT)
            assert not self.thread.is_alive()


@pytest.fixture
def candidates(connect_kube: Callable[[], Kube], namespace: str) -> Iterator[Callable[..., Candidate]]:
    made: list[Candidate] = []

    def make(identity: str, **options: object) -> Candidate:
        kube = connect_kube()  # each candidate its own connection, as separate processes would have
        candidate = Candidate(LeaderElector(kube, "kplan-manager", namespace, identity, **{**FAST, **options}), kube)
        made.append(candidate)
        candidate.campaign()
        return candidate

    yield make
    for candidate in made:
        candidate.quit()


def holder(kube: Kube, namespace: str) -> str | None:
    lease = kube.get("coordination.k8s.io/v1", "Lease", "kplan-manager", namespace)
    return None if lease is None else lease["spec"].get("holderIdentity")


def first_to_lead(a: Candidate, b: Candidate) -> tuple[Candidate, Candidate]:
    eventually(lambda: a.started.is_set() or b.started.is_set())
    return (a, b) if a.started.is_set() else (b, a)


def test_exactly_one_of_two_candidates_leads(candidates: Callable[..., Candidate], kube: Kube, namespace: str) -> None:
    leader, follower = first_to_lead(candidates("a"), candidates("b"))
    tries = follower.kube.requests["get"]

    eventually(lambda: follower.kube.requests["get"] >= tries + 5)  # it kept trying, and kept failing

    assert leader.elector.is_leader and not follower.elector.is_leader
    assert not follower.started.is_set()
    assert holder(kube, namespace) == leader.elector.identity


def test_the_other_takes_over_when_the_leader_stops_renewing(
    candidates: Callable[..., Candidate], kube: Kube, namespace: str
) -> None:
    leader, follower = first_to_lead(candidates("a", release_on_stop=False), candidates("b", release_on_stop=False))

    leader.quit()  # like a crash: the lease is left to expire

    assert leader.stopped.is_set() and not leader.elector.is_leader
    assert follower.started.wait(WAIT)
    assert holder(kube, namespace) == follower.elector.identity


def test_a_leader_that_stops_hands_the_lease_back(
    candidates: Callable[..., Candidate], kube: Kube, namespace: str
) -> None:
    lone = candidates("a")
    assert lone.started.wait(WAIT)

    lone.quit()

    assert lone.stopped.is_set()
    assert holder(kube, namespace) == ""
    newcomer = candidates("b")
    assert newcomer.started.wait(WAIT)


def test_inconsistent_durations_are_refused(kube: Kube) -> None:
    with pytest.raises(ValueError, match="lease_duration > renew_deadline > retry_period"):
        LeaderElector(kube, "lease", "default", "a", lease_duration=5, renew_deadline=10)
