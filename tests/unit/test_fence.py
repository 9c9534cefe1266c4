"""Fence: a leader may act only until its last renewal's deadline; a revoked or spent fence refuses at once."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from engine.kube import Fence, LeadershipLost


class StoppedClock:
    """A clock that moves only when the test moves it."""

    def __init__(self) -> None:
        self.time = 100.0

    def monotonic(self) -> float:
        return self.time

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.time, UTC)

    def wait(self, event: threading.Event, seconds: float) -> bool:
        self.time += seconds
        return event.is_set()


def test_a_fence_never_granted_refuses() -> None:
    with pytest.raises(LeadershipLost, match="not the leader any more: apply of ConfigMap a was not sent"):
        Fence(StoppedClock()).check("apply of ConfigMap a")


def test_a_granted_fence_allows_until_its_deadline_then_refuses() -> None:
    clock = StoppedClock()
    fence = Fence(clock)
    fence.grant(clock.time + 1.5)

    assert fence.check("write") == pytest.approx(1.5)
    clock.time += 1.0
    assert fence.check("write") == pytest.approx(0.5)
    clock.time += 0.5
    with pytest.raises(LeadershipLost):
        fence.check("write")


def test_a_late_grant_never_shortens_a_later_one() -> None:
    clock = StoppedClock()
    fence = Fence(clock)
    fence.grant(clock.time + 2)
    fence.grant(clock.time + 1)  # an older renewal's answer arriving last

    assert fence.remaining() == pytest.approx(2)


def test_a_revoked_fence_refuses_before_its_deadline() -> None:
    clock = StoppedClock()
    fence = Fence(clock)
    fence.grant(clock.time + 10)

    fence.revoke()

    with pytest.raises(LeadershipLost):
        fence.check("write")


def test_leadership_lost_is_no_kplan_error_so_no_failure_handler_swallows_it() -> None:
    from engine.errors import KplanError

    assert not issubclass(LeadershipLost, KplanError)
