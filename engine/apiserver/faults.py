"""Fault injection on the request path: API errors, latency, watch cuts and expiry. Off by default.

A FaultProfile is frozen; assign a new one to `DevCluster.faults` to change it at run time. With a
`seed`, the same sequence of requests meets the same faults.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from engine.apiserver.status import ApiError, internal_error, too_many_requests, unavailable

ANY_VERB = "*"


class WatchCut(StrEnum):
    """How a watch stream is cut: the connection drops (CLOSE) or the stream ends cleanly (END)."""

    CLOSE = "close"
    END = "end"


@dataclass(frozen=True)
class FaultProfile:
    error_rate: Mapping[str, float] = field(default_factory=dict)  # verb (get, list, watch, create, ... or "*")
    error_codes: tuple[int, ...] = (500, 429, 503)  # drawn uniformly for each injected error
    # verb -> share of requests carried out whose answer is then lost: a 500, as when etcd commits a write but
    # the API server's wait for it times out
    lost_answer_rate: Mapping[str, float] = field(default_factory=dict)
    retry_after_seconds: int = 1
    latency_seconds: float = 0.0  # added to every resource request
    latency_jitter_seconds: float = 0.0  # plus a uniform random share of this
    watch_max_events: int | None = None  # cut each watch stream after this many events
    watch_max_seconds: float | None = None  # ... or after this long
    watch_cut: WatchCut = WatchCut.CLOSE
    expire_next_watch: bool = False  # the next watch gets a 410 Expired ERROR event (once)
    seed: int | None = None

    @property
    def active(self) -> bool:
        return bool(self.error_rate or self.lost_answer_rate or self.latency_seconds or self.latency_jitter_seconds
                    or self.watch_max_events is not None or self.watch_max_seconds is not None
                    or self.expire_next_watch)


class FaultInjector:
    """The running state of one profile: its random generator and the one-shot expiry switch."""

    def __init__(self, profile: FaultProfile | None = None) -> None:
        self.profile = profile or FaultProfile()
        self._rng = random.Random(self.profile.seed)
        self._lock = threading.Lock()
        self._expiry_pending = self.profile.expire_next_watch

    def latency(self) -> float:
        p = self.profile
        if not p.latency_jitter_seconds:
            return p.latency_seconds
        with self._lock:
            return p.latency_seconds + self._rng.uniform(0, p.latency_jitter_seconds)

    def error_for(self, verb: str) -> ApiError | None:
        p = self.profile
        rate = p.error_rate.get(verb, p.error_rate.get(ANY_VERB, 0.0))
        if rate <= 0 or not p.error_codes:
            return None
        with self._lock:
            if self._rng.random() >= rate:
                return None
            code = self._rng.choice(p.error_codes)
        if code == 429:
            return too_many_requests(p.retry_after_seconds)
        if code == 503:
            return unavailable(p.retry_after_seconds)
        return internal_error("injected fault")

    def answer_lost(self, verb: str) -> ApiError | None:
        """The 500 that replaces the answer of a request already carried out, when the profile draws one."""
        p = self.profile
        rate = p.lost_answer_rate.get(verb, p.lost_answer_rate.get(ANY_VERB, 0.0))
        if rate <= 0:
            return None
        with self._lock:
            if self._rng.random() >= rate:
                return None
        return internal_error("injected fault after the request was carried out")

    def take_expiry(self) -> bool:
        """True once after the profile asked to expire the next watch."""
        with self._lock:
            pending, self._expiry_pending = self._expiry_pending, False
            return pending
