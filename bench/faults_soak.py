"""The faults and partition soaks, long form (bench/soak.py `--fault-rounds`, `--partitions`): rounds of
tests/e2e/soak_faults.py's `fault_round` and `partition_round` on a simulating cluster of each backend, and the
figures they add up to. Not a benchmark itself: bench/soak.py runs it."""

from __future__ import annotations

import contextlib
import io
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from soak_faults import Feed, Round, fault_round, partition_round

from engine.cli.main import main
from engine.devcluster import backends

NAMESPACE = "soak"


def rounds(backend: str, count: int, budget: float, work: Path,
           one: Callable[[Any, Path, Feed, Path, str], Round]) -> list[Round]:
    """Up to `count` rounds of `one` (within `budget` seconds) on one new cluster of `backend`."""
    done: list[Round] = []
    deadline = time.monotonic() + budget
    with backends.new(backend, simulate=True, nodes=("node-1",)) as cluster:
        kubeconfig = cluster.write_kubeconfig(work / f"{backend}-kubeconfig")
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["init", "--kubeconfig", str(kubeconfig)]) == 0
        cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": NAMESPACE}})
        feed = Feed(cluster, NAMESPACE)
        try:
            while len(done) < count and time.monotonic() < deadline:
                done.append(one(cluster, kubeconfig, feed, work, f"r{len(done) + 1}-"))
        finally:
            feed.close()
    return done


def totals(done: list[Round]) -> dict[str, Any]:
    found = [p for r in done for p in r.problems]
    return {"rounds": len(done), "instances_converged": sum(len(r.instances) for r in done if r.converged),
            "problems": len(found), "first_problems": found[:10]}


def faults(backends_: list[str], count: int, budget: float, work: Path) -> dict[str, Any]:
    """Per backend: rounds survived and what was injected (dev: the fault profile; real: restarts, pauses)."""
    report: dict[str, Any] = {}
    for backend in backends_:
        done = rounds(backend, count, budget / len(backends_), work, fault_round)
        injected: dict[str, Any] = dict(done[0].figures) if done else {}
        for key in ("apiserver_restarts", "watch_expiries"):
            if key in injected:
                injected[key] = sum(int(r.figures.get(key, 0)) for r in done)
        report[backend] = {**totals(done), **injected}
    return report


def partitions(backends_: list[str], count: int, budget: float, work: Path) -> dict[str, Any]:
    """Per backend: partitions of the leader survived, and the failover gaps (old leader's last write to the new
    leader's first, seconds)."""
    report: dict[str, Any] = {}
    for backend in backends_:
        done = rounds(backend, count, budget / len(backends_), work, partition_round)
        gaps = [float(r.figures["failover_gap_seconds"]) for r in done if "failover_gap_seconds" in r.figures]
        report[backend] = {**totals(done), "failover_gap_seconds": {
            "min": min(gaps, default=None), "median": statistics.median(gaps) if gaps else None,
            "max": max(gaps, default=None)},
            "held_requests_dropped": sum(int(r.figures.get("held_requests_dropped", 0)) for r in done)}
    return report
