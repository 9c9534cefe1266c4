"""Retrying transient API failures within a deadline, as kubectl does.

429 and 503 mean the server did not act, and a refused connection never reached it: those are retried for
every request. Other 5xx answers (500, 502, 504) and cut or timed-out connections may come after the server
acted, so only requests that are safe to repeat retry them: everything but POST, and a POST whose caller tells
its own object from another's (`Kube.create(same=)`). Waits double from `first_wait` up to `max_wait`, or last
what Retry-After asks; a request gives up after `max_retries` retries (client-go's ten) or when the next wait
would pass the deadline, and its error then says how many attempts it made.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import urllib3

from engine.kube.clock import Clock
from engine.kube.sdk import ApiException

__all__ = ["Retrying"]

ALWAYS = frozenset({429, 503})  # the server did not act on the request
IF_REPEATABLE = frozenset({500, 502, 504})
NOT_REPEATABLE = frozenset({"POST"})


@dataclass(frozen=True)
class Retrying:
    """When and how long to wait before sending a failed request again; `deadline` is on `clock.monotonic()`."""

    clock: Clock
    deadline: float
    first_wait: float = 0.25
    max_wait: float = 4.0
    max_retries: int = 10
    _never: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)

    @classmethod
    def within(cls, clock: Clock, seconds: float) -> Retrying:
        return cls(clock, clock.monotonic() + seconds)

    def remaining(self) -> float:
        return self.deadline - self.clock.monotonic()

    def pause(self, retries: int, exc: Exception, method: str, repeatable: bool | None = None) -> float | None:
        """Seconds to wait before retry number `retries + 1`, or None to give up; `repeatable` overrides what the
        method says (a POST whose caller tells its own object from another's, `Kube.create(same=)`)."""
        if retries >= self.max_retries or not retryable(exc, method, repeatable):
            return None
        wait = retry_after(exc)
        if wait is None:
            wait = min(self.first_wait * 2**retries, self.max_wait)
        return wait if wait < self.remaining() else None

    def wait(self, seconds: float) -> None:
        self.clock.wait(self._never, seconds)


def retryable(exc: Exception, method: str, repeatable: bool | None = None) -> bool:
    """Whether a request that failed with `exc` may be sent again."""
    if repeatable is None:
        repeatable = method.upper() not in NOT_REPEATABLE
    if isinstance(exc, ApiException) and exc.status:
        return exc.status in ALWAYS or (repeatable and exc.status in IF_REPEATABLE)
    return repeatable or refused(exc)


def refused(exc: BaseException) -> bool:
    """A connection that never reached the server (refused, or no route to it)."""
    if isinstance(exc, urllib3.exceptions.MaxRetryError) and exc.reason is not None:
        exc = exc.reason
    return isinstance(exc, urllib3.exceptions.NewConnectionError | ConnectionRefusedError)


def retry_after(exc: Exception) -> float | None:
    """The seconds a Retry-After header asks for, when the answer has one."""
    headers = getattr(exc, "headers", None) if isinstance(exc, ApiException) else None
    text = headers.get("Retry-After") if headers is not None else None
    try:
        return max(float(text), 0.0) if text is not None else None
    except ValueError:
        return None
