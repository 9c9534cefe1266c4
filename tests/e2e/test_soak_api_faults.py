"""The API faults soak, short form (issue 12): six Instances of multi-step packages converging under
`kplan manager` while the API server misbehaves, on a cluster of the test's own (soak_faults.fault_round).
Dev backend: its fault profile on every HTTP request (10 % answered 500/429/503, latency, each watch cut after
five events, four watches expired with 410 Gone), the second three Instances installed by the CLI through the
same faults. Real backend: kube-apiserver killed and restarted mid-plan, then etcd paused (SIGSTOP) for longer
than the manager's request timeout and resumed. After convergence: the kills soak's invariants
(tests/soak/invariants.py, among them no Job running more Pods than its retries allow), and the manager neither
printed a traceback nor exited."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from soak_faults import Feed, fault_round

from engine.cli.main import main
from engine.devcluster import backends
from engine.devcluster.backends import Cluster

NAMESPACE = "soak"


@pytest.fixture
def own_cluster(backend: str, tmp_path: Path) -> Iterator[tuple[Cluster, Path]]:
    """A simulating cluster of the test's own (faults must not reach the session's), kplan's CRDs installed."""
    with backends.new(backend, simulate=True, nodes=("node-1",)) as cluster:
        kubeconfig = cluster.write_kubeconfig(tmp_path / "kubeconfig")
        assert main(["init", "--kubeconfig", str(kubeconfig)]) == 0
        code, body = cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": NAMESPACE}})
        assert code == 201, body
        yield cluster, kubeconfig


def test_instances_converge_exactly_once_through_api_faults(own_cluster: tuple[Cluster, Path],
                                                            tmp_path: Path) -> None:
    cluster, kubeconfig = own_cluster
    feed = Feed(cluster, NAMESPACE)
    try:
        outcome = fault_round(cluster, kubeconfig, feed, tmp_path, "r1-")
    finally:
        feed.close()

    assert outcome.converged
    assert outcome.problems == []
