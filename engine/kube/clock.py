"""Time for code that waits: a Clock protocol and the system clock, injectable so waits are testable."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Protocol

__all__ = ["Clock", "SystemClock"]


class Clock(Protocol):
    def monotonic(self) -> float:
        """Seconds on a clock that never goes back, for deadlines."""
        ...

    def now(self) -> datetime:
        """The wall-clock time in UTC, for timestamps written to the cluster."""
        ...

    def wait(self, event: threading.Event, seconds: float) -> bool:
        """Block until `event` is set or `seconds` have passed; True when the event was set."""
        ...


class SystemClock:
    """The real time of this process."""

    def monotonic(self) -> float:
        return time.monotonic()

    def now(self) -> datetime:
        return datetime.now(UTC)

    def wait(self, event: threading.Event, seconds: float) -> bool:
        return event.wait(max(seconds, 0.0))
