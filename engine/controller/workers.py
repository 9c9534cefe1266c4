"""Workers: threads that take keys from the work queue and reconcile them, requeueing on timers and errors."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from engine.controller.queue import WorkQueue
from engine.errors import KplanError
from engine.kube import LeadershipLost

__all__ = ["Workers", "process"]

log = logging.getLogger(__name__)

Reconcile = Callable[[str, str], float | None]  # (namespace, name) -> seconds until due again, or None
Outcome = Callable[[bool], None]  # called after each pass with failed=True/False


def process(queue: WorkQueue, key: str, reconcile: Reconcile, outcome: Outcome) -> None:
    """One pass over `key`: success forgets its backoff (and honours a timer); failure retries with backoff."""
    namespace, _, name = key.partition("/")
    try:
        after = reconcile(namespace, name)
    except LeadershipLost as exc:  # the new leader carries on; this manager takes every key up again if it leads
        log.info("pass interrupted", extra={"instance": key, "reason": str(exc)})
    except Exception as exc:
        delay = queue.add_rate_limited(key)
        log.warning("reconcile failed", extra={"instance": key, "error": str(exc), "retry_in": round(delay, 3)},
                    exc_info=not isinstance(exc, KplanError))
        outcome(True)
    else:
        queue.forget(key)
        if after is not None:
            queue.add_after(key, after)
        outcome(False)
    finally:
        queue.done(key)


class Workers:
    """`count` threads draining `queue` until `stop()` (each finishes the pass it is in)."""

    def __init__(self, queue: WorkQueue, reconcile: Reconcile, outcome: Outcome, count: int) -> None:
        self._queue, self._reconcile, self._outcome = queue, reconcile, outcome
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, name=f"worker-{i}", daemon=True) for i in range(count)]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self, *, wait: bool = True) -> None:
        self._stop.set()
        self._queue.wake()
        if wait:
            for thread in self._threads:
                if thread is not threading.current_thread():
                    thread.join()

    @property
    def alive(self) -> bool:
        return not self._stop.is_set() and all(t.is_alive() for t in self._threads)

    def _run(self) -> None:
        while (key := self._queue.get(self._stop)) is not None:
            process(self._queue, key, self._reconcile, self._outcome)
