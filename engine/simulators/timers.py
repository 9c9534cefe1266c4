"""Deadlines on one thread: a heap of (due time, callback) and a Condition to sleep until the next one."""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class Timers:
    """Runs each scheduled callback once, on the timer thread, when its delay has passed."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._order = itertools.count()
        self._cond = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="devcluster-timers", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Drop every pending deadline and end the thread."""
        with self._cond:
            self._stopped = True
            self._heap.clear()
            self._cond.notify_all()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join()

    def schedule(self, delay: float, callback: Callable[[], None]) -> None:
        with self._cond:
            if self._stopped:
                return
            heapq.heappush(self._heap, (self._clock() + max(0.0, delay), next(self._order), callback))
            self._cond.notify_all()

    def pending(self) -> int:
        with self._cond:
            return len(self._heap)

    def _run(self) -> None:
        while True:
            callback = self._next_due()
            if callback is None:
                return
            try:
                callback()
            except Exception:
                log.exception("timer callback failed")

    def _next_due(self) -> Callable[[], None] | None:
        """Sleep until the earliest deadline and pop its callback; None once stopped."""
        with self._cond:
            while not self._stopped:
                if not self._heap:
                    self._cond.wait()
                    continue
                due = self._heap[0][0] - self._clock()
                if due <= 0:
                    return heapq.heappop(self._heap)[2]
                self._cond.wait(due)
            return None
