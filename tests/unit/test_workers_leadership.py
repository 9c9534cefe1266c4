"""A pass that ends with LeadershipLost is interrupted, not failed: no retry with backoff is scheduled (the new
leader carries on; this manager takes every key up again if it leads), no failure is counted, and the key is
done so it can be handed out again."""

from __future__ import annotations

import logging

import pytest

from engine.controller.queue import WorkQueue
from engine.controller.workers import process
from engine.kube import LeadershipLost


def lose_leadership(namespace: str, name: str) -> float | None:
    raise LeadershipLost(f"apply of ConfigMap {namespace}/{name}")


def test_a_pass_interrupted_by_a_lost_lease_is_neither_retried_nor_counted(caplog: pytest.LogCaptureFixture) -> None:
    queue = WorkQueue()
    outcomes: list[bool] = []
    queue.add("ns/a")
    key = queue.get()
    assert key == "ns/a"

    with caplog.at_level(logging.INFO, logger="engine.controller.workers"):
        process(queue, key, lose_leadership, outcomes.append)

    assert queue.failures("ns/a") == 0 and outcomes == []
    assert [r.getMessage() for r in caplog.records] == ["pass interrupted"]
    assert not any(r.exc_info for r in caplog.records)  # no traceback
    queue.add("ns/a")
    assert queue.get() == "ns/a"  # done: handed out again
    queue.shutdown()
