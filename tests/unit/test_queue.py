"""WorkQueue: de-duplication, one key never processed twice at once, lanes (FIRST, NORMAL, LATER), add_after timers,
per-key backoff, shutdown.

Time is a manual clock: timers fire when the test advances it, so nothing here depends on how fast the
machine is. Threads are synchronised on conditions with deadlines, never by sleeping.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import pytest

from engine.controller.queue import Lane, WorkQueue

DEADLINE = 10.0  # seconds any single condition may take before the test fails


class ManualClock:
    """A clock that moves only when told; `wait` returns when its event is set or the clock passed the deadline."""

    NOTICE = 0.01  # how often a waiter looks at its event (events do not notify this clock)

    def __init__(self) -> None:
        self._time = 0.0
        self._cond = threading.Condition()
        self.waiting: list[float] = []  # deadlines of threads blocked in wait()

    def monotonic(self) -> float:
        with self._cond:
            return self._time

    def now(self) -> datetime:
        return datetime(2024, 1, 1, tzinfo=UTC) + timedelta(seconds=self.monotonic())

    def wait(self, event: threading.Event, seconds: float) -> bool:
        with self._cond:
            deadline = self._time + seconds
            self.waiting.append(deadline)
            self._cond.notify_all()
            try:
                while not event.is_set() and self._time < deadline:
                    self._cond.wait(self.NOTICE)
                return event.is_set()
            finally:
                self.waiting.remove(deadline)
                self._cond.notify_all()

    def advance(self, seconds: float) -> None:
        with self._cond:
            self._time += seconds
            self._cond.notify_all()

    def until_waiting_for(self, deadline: float) -> None:
        """Block until some thread waits for exactly `deadline` (a timer is armed for it)."""
        with self._cond:
            assert self._cond.wait_for(lambda: deadline in self.waiting, DEADLINE), f"nobody waits for {deadline}"


def take(queue: WorkQueue, stop: threading.Event | None = None) -> str | None:
    """The next key, failing the test when none comes within the deadline."""
    got: list[str | None] = []
    thread = threading.Thread(target=lambda: got.append(queue.get(stop)), daemon=True)
    thread.start()
    thread.join(DEADLINE)
    assert got, "get() did not return"
    return got[0]


class Getter:
    """A thread blocked in `queue.get()`; `result()` waits for what it received."""

    def __init__(self, queue: WorkQueue, stop: threading.Event | None = None) -> None:
        self._got: list[str | None] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(queue, stop), daemon=True)
        self._thread.start()

    def _run(self, queue: WorkQueue, stop: threading.Event | None) -> None:
        self._got.append(queue.get(stop))
        self._done.set()

    @property
    def returned(self) -> bool:
        return self._done.is_set()

    def result(self) -> str | None:
        assert self._done.wait(DEADLINE), "get() did not return"
        return self._got[0]


def until(predicate: Callable[[], bool]) -> None:
    event = threading.Event()
    deadline = threading.Timer(DEADLINE, event.set)
    deadline.start()
    try:
        while not predicate():
            assert not event.wait(0.005), "condition not met in time"
    finally:
        deadline.cancel()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def queue(clock: ManualClock) -> Iterator[WorkQueue]:
    q = WorkQueue(clock=clock, backoff_base=1.0, backoff_max=8.0)
    yield q
    q.shutdown()


def test_a_key_added_twice_is_handed_out_once(queue: WorkQueue) -> None:
    queue.add("ns/a")
    queue.add("ns/b")
    queue.add("ns/a")

    assert queue.depth == 2
    assert take(queue) == "ns/a"
    assert take(queue) == "ns/b"
    assert queue.depth == 0


def test_a_key_being_processed_is_not_handed_out_again_until_done(queue: WorkQueue) -> None:
    queue.add("ns/a")
    assert take(queue) == "ns/a"

    queue.add("ns/a")
    waiting = Getter(queue)
    assert queue.depth == 0
    assert not waiting.returned

    queue.done("ns/a")

    assert waiting.result() == "ns/a"


def test_re_adds_during_processing_collapse_into_one_more_pass(queue: WorkQueue) -> None:
    queue.add("ns/a")
    assert take(queue) == "ns/a"
    for _ in range(5):
        queue.add("ns/a")

    queue.done("ns/a")

    assert queue.depth == 1
    assert take(queue) == "ns/a"
    queue.done("ns/a")
    assert queue.depth == 0


def test_other_keys_are_handed_out_while_one_is_processed(queue: WorkQueue) -> None:
    queue.add("ns/a")
    assert take(queue) == "ns/a"
    queue.add("ns/a")
    queue.add("ns/b")

    assert take(queue) == "ns/b"


def test_workers_never_process_one_key_concurrently() -> None:
    queue = WorkQueue()
    in_flight: set[str] = set()
    overlaps: list[str] = []
    passes: list[str] = []
    lock = threading.Lock()

    def work() -> None:
        while (key := queue.get()) is not None:
            with lock:
                if key in in_flight:
                    overlaps.append(key)
                in_flight.add(key)
            with lock:
                in_flight.discard(key)
                passes.append(key)
            queue.done(key)

    workers = [threading.Thread(target=work, daemon=True) for _ in range(4)]
    for worker in workers:
        worker.start()
    for i in range(400):
        queue.add(f"ns/k{i % 3}")
    until(lambda: queue.depth == 0 and not in_flight)
    queue.shutdown()
    for worker in workers:
        worker.join(DEADLINE)

    assert overlaps == []
    assert set(passes) == {"ns/k0", "ns/k1", "ns/k2"}


def test_add_after_hands_the_key_out_only_once_the_delay_passed(queue: WorkQueue, clock: ManualClock) -> None:
    queue.add_after("ns/a", 5.0)
    clock.until_waiting_for(5.0)
    assert queue.depth == 0

    clock.advance(5.0)

    assert take(queue) == "ns/a"


def test_the_earlier_of_two_timers_for_a_key_wins(queue: WorkQueue, clock: ManualClock) -> None:
    queue.add_after("ns/a", 10.0)
    queue.add_after("ns/a", 3.0)
    queue.add_after("ns/a", 7.0)
    clock.until_waiting_for(3.0)

    clock.advance(3.0)
    assert take(queue) == "ns/a"
    queue.done("ns/a")
    clock.advance(10.0)
    clock.until_waiting_for(3600.0 + 13.0)  # the timer thread is idle: nothing else is due

    assert queue.depth == 0


def test_add_after_of_a_waiting_key_does_not_queue_it_twice(queue: WorkQueue, clock: ManualClock) -> None:
    queue.add("ns/a")
    queue.add_after("ns/a", 1.0)
    clock.until_waiting_for(1.0)

    clock.advance(1.0)
    clock.until_waiting_for(3600.0 + 1.0)

    assert queue.depth == 1


def test_backoff_doubles_per_failure_up_to_the_maximum_and_forget_resets_it(queue: WorkQueue) -> None:
    delays = [queue.add_rate_limited("ns/a") for _ in range(6)]

    assert delays == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert queue.failures("ns/a") == 6
    assert queue.add_rate_limited("ns/b") == 1.0

    queue.forget("ns/a")

    assert queue.failures("ns/a") == 0
    assert queue.add_rate_limited("ns/a") == 1.0


def test_a_rate_limited_key_comes_back_after_its_backoff(queue: WorkQueue, clock: ManualClock) -> None:
    queue.add_rate_limited("ns/a")
    queue.add_rate_limited("ns/a")  # second failure: 2 s, but the 1 s timer is earlier
    clock.until_waiting_for(1.0)
    assert queue.depth == 0

    clock.advance(1.0)

    assert take(queue) == "ns/a"


def test_shutdown_releases_blocked_getters_and_ignores_later_adds(queue: WorkQueue, clock: ManualClock) -> None:
    blocked = Getter(queue)
    queue.add_after("ns/late", 1.0)

    queue.shutdown()

    assert blocked.result() is None
    queue.add("ns/a")
    clock.advance(2.0)
    assert queue.depth == 0
    assert take(queue) is None


def test_a_set_stop_event_and_wake_release_a_getter_without_shutting_down(queue: WorkQueue) -> None:
    stop = threading.Event()
    blocked = Getter(queue, stop)

    stop.set()
    queue.wake()

    assert blocked.result() is None
    assert not queue.shutting_down
    queue.add("ns/a")
    assert take(queue) == "ns/a"


def test_wait_idle_returns_once_every_key_was_processed(queue: WorkQueue) -> None:
    queue.add("ns/a")
    queue.add("ns/b")
    assert not queue.wait_idle(0)
    first, second = take(queue), take(queue)
    assert not queue.wait_idle(0)  # handed out, not done yet
    queue.done(first)
    idle = threading.Thread(target=lambda: queue.done(second))

    idle.start()

    assert queue.wait_idle(DEADLINE)


def test_lanes_are_handed_out_first_then_normal_then_later(queue: WorkQueue) -> None:
    queue.add("ns/later", Lane.LATER)
    queue.add("ns/normal")
    queue.add("ns/first", Lane.FIRST)
    queue.add("ns/normal-2", Lane.NORMAL)

    assert [take(queue) for _ in range(4)] == ["ns/first", "ns/normal", "ns/normal-2", "ns/later"]


def test_a_key_moves_up_to_an_earlier_lane_but_never_down(queue: WorkQueue) -> None:
    for name in ("a", "b", "c"):
        queue.add(f"ns/{name}", Lane.LATER)
    queue.add("ns/x")
    queue.add("ns/c", Lane.FIRST)  # moves up
    queue.add("ns/x", Lane.LATER)  # stays NORMAL

    assert queue.depth == 4
    assert [take(queue) for _ in range(4)] == ["ns/c", "ns/x", "ns/a", "ns/b"]
    assert queue.depth == 0


def test_a_moved_key_is_handed_out_once_and_never_while_it_is_processed(queue: WorkQueue) -> None:
    queue.add("ns/a", Lane.LATER)
    queue.add("ns/a", Lane.FIRST)
    assert take(queue) == "ns/a"
    queue.add("ns/a", Lane.LATER)  # re-added while processed: handed out after done, not from the stale entry
    queue.add("ns/b", Lane.LATER)

    assert take(queue) == "ns/b"  # the stale entry of ns/a, first in LATER, was skipped: ns/a is being processed
    waiting = Getter(queue)
    queue.done("ns/a")
    assert waiting.result() == "ns/a"
    queue.done("ns/a")
    queue.done("ns/b")
    assert queue.wait_idle(0)
