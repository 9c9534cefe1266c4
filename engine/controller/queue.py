"""WorkQueue: de-duplicating, rate-limited queue of Instance keys; one key is never handed out twice at once.

The contract is client-go's workqueue: adding a key that waits is a no-op; a key added while it is being
processed is handed out again after `done`; `add_after` holds a key back on a timer; `add_rate_limited`
holds it back for a per-key exponential backoff that `forget` resets. Besides, keys wait in three lanes, like
controller-runtime's priority queue: FIRST is handed out before NORMAL, NORMAL before LATER, and a key added to a
lane ahead of the one it waits in moves there. A manager that just took over puts the Instances with work under
way FIRST, watch events go NORMAL, and what only a listing brought up (every object of a kind at start, the
settled Instances) goes LATER, so that it never holds back a plan in progress.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections import deque
from collections.abc import Callable
from enum import IntEnum

from engine.kube import Clock, SystemClock

__all__ = ["Lane", "WorkQueue"]


class Lane(IntEnum):
    """Where a key waits; a lower lane is handed out first."""

    FIRST = 0
    NORMAL = 1
    LATER = 2


class WorkQueue:
    """Keys (`namespace/name`) waiting to be reconciled, in the order they were first added."""

    def __init__(self, *, clock: Clock | None = None, backoff_base: float = 0.05, backoff_max: float = 300.0) -> None:
        self._clock: Clock = clock or SystemClock()
        self._backoff_base, self._backoff_max = backoff_base, backoff_max
        # Keys in hand-out order per lane. A key that moved up a lane still stands in the one it left: that stale
        # entry is skipped when its turn comes (the key's lane is no longer that one).
        self._lanes: tuple[deque[str], ...] = tuple(deque() for _ in Lane)
        self._waiting: dict[str, Lane] = {}  # the lane of every key waiting (or re-added while processing)
        self._processing: set[str] = set()
        self._failures: dict[str, int] = {}
        self._cond = threading.Condition()
        self._shutting_down = False
        self._timers = Timers(self._clock, self.add)

    # --- adding ---------------------------------------------------------------------------

    def add(self, key: str, lane: Lane = Lane.NORMAL) -> None:
        """Queue `key` in `lane` unless it already waits there or ahead (a key waiting in a later lane moves up);
        a key being processed is queued again once it is done."""
        with self._cond:
            current = self._waiting.get(key)
            if self._shutting_down or (current is not None and current <= lane):
                return
            self._waiting[key] = lane
            if key not in self._processing:
                self._lanes[lane].append(key)
                self._cond.notify()

    def add_after(self, key: str, delay: float) -> None:
        """Queue `key` in `delay` seconds (at once when `delay` <= 0); an earlier pending timer wins."""
        if delay <= 0:
            self.add(key)
            return
        with self._cond:
            if self._shutting_down:
                return
        self._timers.schedule(key, delay)

    def add_rate_limited(self, key: str) -> float:
        """Queue `key` after its backoff (base * 2**failures, at most max); returns the delay chosen."""
        with self._cond:
            failures = self._failures.get(key, 0)
            self._failures[key] = failures + 1
        delay = float(min(self._backoff_base * 2 ** min(failures, 62), self._backoff_max))
        self.add_after(key, delay)
        return delay

    def forget(self, key: str) -> None:
        """Reset `key`'s backoff: its last attempt succeeded."""
        with self._cond:
            self._failures.pop(key, None)

    def failures(self, key: str) -> int:
        with self._cond:
            return self._failures.get(key, 0)

    # --- handing out ----------------------------------------------------------------------

    def get(self, stop: threading.Event | None = None) -> str | None:
        """The next key, marked as processing; None once shut down or when `stop` is set (see `wake`)."""
        with self._cond:
            while True:
                while not any(self._lanes) and not self._shutting_down and not (stop is not None and stop.is_set()):
                    self._cond.wait()
                if self._shutting_down or (stop is not None and stop.is_set()):
                    return None
                lane = next(Lane(n) for n, keys in enumerate(self._lanes) if keys)
                key = self._lanes[lane].popleft()
                if self._waiting.get(key) == lane and key not in self._processing:  # else a stale entry
                    self._processing.add(key)
                    del self._waiting[key]
                    return key

    def done(self, key: str) -> None:
        """Processing of `key` ended; if it was added meanwhile it is queued again."""
        with self._cond:
            self._processing.discard(key)
            lane = self._waiting.get(key)
            if lane is not None:
                self._lanes[lane].append(key)
            self._cond.notify_all()  # a getter, or someone waiting for the queue to be idle

    def wait_idle(self, timeout: float) -> bool:
        """Block until no key is ready or being processed (timers may be pending); False after `timeout` s."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._waiting and not self._processing, timeout)

    def wake(self) -> None:
        """Wake every blocked `get`, so that callers whose `stop` event is now set return None."""
        with self._cond:
            self._cond.notify_all()

    def shutdown(self) -> None:
        """Hand out nothing more; blocked `get` calls return None and timers are dropped."""
        with self._cond:
            self._shutting_down = True
            self._cond.notify_all()
        self._timers.stop()

    # --- figures --------------------------------------------------------------------------

    @property
    def depth(self) -> int:
        """Keys ready to be handed out."""
        with self._cond:
            return sum(1 for key in self._waiting if key not in self._processing)

    @property
    def shutting_down(self) -> bool:
        with self._cond:
            return self._shutting_down

    def __len__(self) -> int:
        return self.depth


class Timers:
    """Keys due at a time; a thread (started on first use) hands each to `fire` when it is due."""

    def __init__(self, clock: Clock, fire: Callable[[str], None]) -> None:
        self._clock, self._fire = clock, fire
        self._heap: list[tuple[float, int, str]] = []
        self._due: dict[str, float] = {}
        self._order = itertools.count()
        self._lock = threading.Lock()
        self._changed = threading.Event()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def schedule(self, key: str, delay: float) -> None:
        due = self._clock.monotonic() + delay
        with self._lock:
            if self._stopped.is_set() or self._due.get(key, due + 1) <= due:
                return
            self._due[key] = due
            heapq.heappush(self._heap, (due, next(self._order), key))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="workqueue-timers", daemon=True)
                self._thread.start()
        self._changed.set()

    def stop(self) -> None:
        with self._lock:
            self._stopped.set()
            thread = self._thread
        self._changed.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        while not self._stopped.is_set():
            self._changed.clear()
            for key in self._pop_due():
                self._fire(key)
            self._clock.wait(self._changed, self._next_delay())

    def _pop_due(self) -> list[str]:
        now = self._clock.monotonic()
        fired = []
        with self._lock:
            while self._heap and self._heap[0][0] <= now:
                due, _, key = heapq.heappop(self._heap)
                if self._due.get(key) == due:
                    del self._due[key]
                    fired.append(key)
        return fired

    def _next_delay(self) -> float:
        with self._lock:
            if not self._heap:
                return 3600.0
            return max(self._heap[0][0] - self._clock.monotonic(), 0.0)
