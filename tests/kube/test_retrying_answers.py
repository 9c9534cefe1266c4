"""A retried request ends with what the server finally answered (found by the API faults soak, issue 12): a get
answered 503 and then 404 is a missing object, not an unavailable server, so `kplan install` under faults
creates the Instance it looked for instead of failing with "not found (gave up after 2 attempts)"."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.apiserver.faults import FaultProfile
from engine.devcluster.cluster import DevCluster
from engine.kube import NotFound, connect

# With this seed the first get is answered 503 and the second is not touched: one retry, then the real answer.
ONE_503 = FaultProfile(error_rate={"get": 0.5}, error_codes=(503,), retry_after_seconds=0, seed=4)


def test_a_get_retried_after_a_503_finds_the_object_missing(own_cluster: DevCluster, tmp_path: Path) -> None:
    with connect(str(own_cluster.write_kubeconfig(tmp_path / "k")), retry_for=30) as kube:
        kube.resource("v1", "ConfigMap")
        own_cluster.faults = ONE_503

        assert kube.get("v1", "ConfigMap", "missing", "default") is None
        assert kube.requests["get"] == 2  # it was retried


def test_a_patch_retried_after_a_503_reports_the_missing_object(own_cluster: DevCluster, tmp_path: Path) -> None:
    with connect(str(own_cluster.write_kubeconfig(tmp_path / "k")), retry_for=30) as kube:
        kube.resource("v1", "ConfigMap")
        own_cluster.faults = FaultProfile(error_rate={"patch": 0.5}, error_codes=(503,), retry_after_seconds=0,
                                          seed=4)

        with pytest.raises(NotFound, match="ConfigMap default/missing"):
            kube.patch("v1", "ConfigMap", "missing", "default", {"data": {"a": "b"}})
        assert kube.requests["patch"] == 2
