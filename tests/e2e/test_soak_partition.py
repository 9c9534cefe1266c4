"""The partition soak, short form (issue 12; soak_faults.partition_round): the leading `kplan manager` is cut off
from the API server in the middle of a pass (its tap holds its next write and everything after it) while a
standby, on a tap never cut, takes the Lease over. The old leader must stop acting within its renew deadline:
its held write is abandoned, never delivered when the partition heals, and no write of either identity is in
flight while the other writes (counted per identity at the taps). After convergence the kills soak's invariants
hold, neither manager printed a traceback or exited, and the failover gap is printed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from soak_faults import Feed, partition_round

if TYPE_CHECKING:
    from conftest import Kplan

    from engine.devcluster.backends import Cluster


def test_a_partitioned_leader_stops_acting_before_the_standby_takes_over(
    simcluster: Cluster, sim_kubeconfig: Path, kplan: Kplan, tmp_path: Path
) -> None:
    feed = Feed(simcluster, kplan.namespace)
    try:
        outcome = partition_round(simcluster, sim_kubeconfig, feed, tmp_path, "")
    finally:
        feed.close()

    print(outcome.figures)
    assert outcome.converged
    assert outcome.problems == []
