"""Fence: until when a leader may still act, so that a lost Lease stops its requests, not only its next pass.

The elector grants the fence on each successful renewal until the renewal's start plus the renew deadline; a
candidate takes the Lease over only after `lease_duration` (> renew deadline) without seeing it renewed, so a
leader that keeps to its fence never acts once another may. A fenced Transport checks it before every attempt
and bounds each request's timeout by what is left of it: a request blocked by a partition is abandoned before
the Lease can pass to another, and the pass it belongs to ends with LeadershipLost.
"""

from __future__ import annotations

import math
import threading

from engine.kube.clock import Clock

__all__ = ["Fence", "LeadershipLost"]


class LeadershipLost(Exception):
    """The Lease this process acted under is lost (or its renewal overdue): the pass in progress must stop.

    Deliberately no KplanError: nothing that handles API failures (a failed step, a retried request) may catch it."""

    def __init__(self, what: str) -> None:
        super().__init__(f"not the leader any more: {what} was not sent")


class Fence:
    """A deadline on `clock.monotonic()`, extended by the elector and revoked when it steps down."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._until = -math.inf
        self._lock = threading.Lock()

    def grant(self, until: float) -> None:
        """Allow acting until `until` (never shortens a later grant)."""
        with self._lock:
            self._until = max(self._until, until)

    def revoke(self) -> None:
        with self._lock:
            self._until = -math.inf

    def remaining(self) -> float:
        """Seconds left to act (<= 0: none)."""
        with self._lock:
            until = self._until
        return until - self._clock.monotonic()

    def check(self, what: str) -> float:
        """The seconds left; LeadershipLost when there are none."""
        left = self.remaining()
        if left <= 0:
            raise LeadershipLost(what)
        return left
