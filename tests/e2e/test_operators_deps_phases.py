"""Ordering inside the shipped packages' plans, with the manager running, read from the order in which the cluster
committed the changes: elastic applies its data nodes only once the masters are ready and Kibana only once the
data nodes are; etcd's upgrade lowers the StatefulSet's partition one member at a time (2, 1, 0 for three
members), each time only after the member the previous step rolled is updated and the set is ready again."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from cli_harness import Cli

from engine.controller import Manager
from engine.kube import Kube

if TYPE_CHECKING:
    from conftest import Change, Changes

OPERATORS = Path(__file__).resolve().parents[2] / "operators"
WAIT = ("--wait", "--timeout", "90s")


@pytest.fixture
def cli(sim_kubeconfig: Path, sim_namespace: str, sim_kube: Kube) -> Cli:
    return Cli(sim_kubeconfig, sim_namespace)


def ok(cli: Cli, *args: str) -> None:
    result = cli(*args)
    assert result.code == 0, result.text


def ready(kind: str, name: str, replicas: int) -> Any:
    """A change of that workload whose status reports every replica ready for its current generation."""
    def match(change: Change) -> bool:
        status, meta = change.obj.get("status") or {}, change.obj["metadata"]
        ready_count = status.get("readyReplicas") if kind == "StatefulSet" else status.get("availableReplicas")
        return (change.kind, change.name) == (kind, name) and ready_count == replicas and (
            status.get("observedGeneration") == meta.get("generation"))
    return match


def test_elastic_phases_wait_for_the_previous_node_set(cli: Cli, manager: Manager, changes: Changes) -> None:
    ok(cli, "install", str(OPERATORS / "elastic"), "--instance", "logs", "-p", "dataNodes=2", *WAIT)

    masters_ready = changes.first(ready("StatefulSet", "logs-master", 3))
    data_added = changes.added("StatefulSet", "logs-data")
    data_ready = changes.first(ready("StatefulSet", "logs-data", 2))
    kibana_added = changes.added("Deployment", "logs-kibana")

    assert changes.added("StatefulSet", "logs-master") < masters_ready < data_added < data_ready < kibana_added


def partition(change: Change) -> int | None:
    strategy = (change.obj.get("spec") or {}).get("updateStrategy") or {}
    value = (strategy.get("rollingUpdate") or {}).get("partition")
    return value if isinstance(value, int) else None


def test_etcd_upgrade_rolls_one_member_per_step(cli: Cli, manager: Manager, changes: Changes) -> None:
    ok(cli, "install", str(OPERATORS / "etcd"), "--instance", "kv", *WAIT)
    start = len(changes.all)

    ok(cli, "update", "--instance", "kv", "-p", "version=3.5.16", *WAIT)

    rolled = [c for c in changes.all[start:]
              if (c.kind, c.name) == ("StatefulSet", "kv") and image(c).endswith(":v3.5.16")]
    lowered = [(i, partition(c)) for i, c in enumerate(rolled)
               if i == 0 or partition(c) != partition(rolled[i - 1])]
    assert [p for _, p in lowered] == [2, 1, 0]
    for (at, value), (following, _) in itertools.pairwise(lowered):
        between = rolled[at:following]
        assert value is not None
        assert any((c.obj.get("status") or {}).get("updatedReplicas", 0) >= 3 - value
                   and (c.obj.get("status") or {}).get("readyReplicas") == 3
                   and c.obj["status"].get("observedGeneration") == c.obj["metadata"]["generation"]
                   for c in between), f"partition {value} was lowered before member {value} was ready"
    assert rolled[-1].obj["status"]["updatedReplicas"] == 3


def image(change: Change) -> str:
    return str(change.obj["spec"]["template"]["spec"]["containers"][0]["image"])
