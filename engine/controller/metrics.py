"""The manager's Prometheus metrics, written in the text exposition format (version 0.0.4)."""

from __future__ import annotations

import bisect
import threading
from collections import Counter
from collections.abc import Callable, Mapping

__all__ = ["CONTENT_TYPE", "DURATION_BUCKETS", "Metrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DURATION_BUCKETS = (0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)


class Histogram:
    """Observations of one label set: cumulative bucket counts, sum and count."""

    def __init__(self, buckets: tuple[float, ...]) -> None:
        self.buckets = buckets
        self.counts = [0] * len(buckets)
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        for i in range(bisect.bisect_left(self.buckets, value), len(self.buckets)):
            self.counts[i] += 1
        self.sum += value
        self.count += 1


class Metrics:
    """Counters the workers update, plus figures read at scrape time (queue depth, API requests, leadership)."""

    def __init__(
        self,
        *,
        requests: Callable[[], Mapping[str, int]],
        depth: Callable[[], int],
        leading: Callable[[], bool],
    ) -> None:
        self._requests, self._depth, self._leading = requests, depth, leading
        self._lock = threading.Lock()
        self.reconciles = 0
        self.errors = 0
        self._durations: dict[tuple[str, str], Histogram] = {}

    def reconciled(self, *, failed: bool) -> None:
        with self._lock:
            self.reconciles += 1
            self.errors += int(failed)

    def plan_finished(self, plan: str, status: str, seconds: float) -> None:
        with self._lock:
            histogram = self._durations.setdefault((plan, status), Histogram(DURATION_BUCKETS))
            histogram.observe(seconds)

    def exposition(self) -> str:
        """Every metric, as Prometheus scrapes it."""
        with self._lock:
            lines = [
                *counter("kplan_reconcile_total", "Reconcile passes run.", self.reconciles),
                *counter("kplan_reconcile_errors_total", "Reconcile passes that failed and were retried.",
                         self.errors),
                *self._histogram_lines(),
            ]
        lines += gauge("kplan_workqueue_depth", "Instance keys waiting to be reconciled.", self._depth())
        lines += gauge("kplan_leader", "1 while this manager holds the leader lease.", int(self._leading()))
        lines += requests_lines(Counter(self._requests()))
        return "\n".join(lines) + "\n"

    def _histogram_lines(self) -> list[str]:
        name = "kplan_plan_duration_seconds"
        lines = [f"# HELP {name} Wall time of finished plans, by plan and final status.", f"# TYPE {name} histogram"]
        for (plan, status), histogram in sorted(self._durations.items()):
            labels = f'plan="{escape(plan)}",status="{escape(status)}"'
            for bound, count in zip(histogram.buckets, histogram.counts, strict=True):
                lines.append(f'{name}_bucket{{{labels},le="{bound:g}"}} {count}')
            lines.append(f'{name}_bucket{{{labels},le="+Inf"}} {histogram.count}')
            lines.append(f"{name}_sum{{{labels}}} {histogram.sum:g}")
            lines.append(f"{name}_count{{{labels}}} {histogram.count}")
        return lines


def counter(name: str, help: str, value: int) -> list[str]:
    return [f"# HELP {name} {help}", f"# TYPE {name} counter", f"{name} {value}"]


def gauge(name: str, help: str, value: int) -> list[str]:
    return [f"# HELP {name} {help}", f"# TYPE {name} gauge", f"{name} {value}"]


def requests_lines(requests: Counter[str]) -> list[str]:
    name = "kplan_api_requests_total"
    lines = [f"# HELP {name} Requests sent to the API server, by verb.", f"# TYPE {name} counter"]
    lines += [f'{name}{{verb="{escape(verb)}"}} {count}' for verb, count in sorted(requests.items())]
    return lines


def escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
