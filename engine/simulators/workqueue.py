"""A work queue of object keys, as in client-go: each key is queued once and never processed twice at once."""

from __future__ import annotations

import threading
from collections import deque
from typing import NamedTuple

from engine.simulators.timers import Timers

BASE_BACKOFF = 0.05  # seconds before the first retry of a failed key; doubles up to MAX_BACKOFF
MAX_BACKOFF = 5.0


class Key(NamedTuple):
    """What a controller reconciles: its name and one object's namespace and name."""

    controller: str
    namespace: str
    name: str


class WorkQueue:
    """Keys waiting for a worker; a key added while it is processed is queued again when it is done."""

    def __init__(self, timers: Timers) -> None:
        self._timers = timers
        self._cond = threading.Condition()
        self._queue: deque[Key] = deque()
        self._queued: set[Key] = set()
        self._processing: set[Key] = set()
        self._dirty: set[Key] = set()
        self._failures: dict[Key, int] = {}
        self._closed = False

    def add(self, key: Key) -> None:
        with self._cond:
            if self._closed or key in self._queued:
                return
            if key in self._processing:
                self._dirty.add(key)
                return
            self._queued.add(key)
            self._queue.append(key)
            self._cond.notify()

    def add_after(self, key: Key, delay: float) -> None:
        if delay <= 0:
            self.add(key)
        else:
            self._timers.schedule(delay, lambda: self.add(key))

    def retry(self, key: Key) -> None:
        """Queue the key again after a backoff that doubles with each consecutive failure."""
        with self._cond:
            failures = self._failures.get(key, 0)
            self._failures[key] = failures + 1
        self.add_after(key, min(MAX_BACKOFF, BASE_BACKOFF * 2**failures))

    def forget(self, key: Key) -> None:
        """The key succeeded: its next failure starts from the base backoff."""
        with self._cond:
            self._failures.pop(key, None)

    def get(self) -> Key | None:
        """The next key to process (marked as processing); None once the queue is closed."""
        with self._cond:
            while not self._queue and not self._closed:
                self._cond.wait()
            if self._closed:
                return None
            key = self._queue.popleft()
            self._queued.discard(key)
            self._processing.add(key)
            return key

    def done(self, key: Key) -> None:
        with self._cond:
            self._processing.discard(key)
            if key in self._dirty:
                self._dirty.discard(key)
                if not self._closed:
                    self._queued.add(key)
                    self._queue.append(key)
                    self._cond.notify()

    def waiting(self) -> int:
        """Keys queued and not yet taken."""
        with self._cond:
            return len(self._queue)

    def idle(self) -> bool:
        with self._cond:
            return not self._queue and not self._processing

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._queue.clear()
            self._queued.clear()
            self._cond.notify_all()
