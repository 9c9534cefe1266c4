"""Kube against a failing server: injected 5xx and 429 answers and an unreachable server are ApiUnavailable."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import yaml

from engine.apiserver.faults import FaultProfile
from engine.devcluster.cluster import DevCluster
from engine.errors import ApiUnavailable, TransientError
from engine.kube import Kube, connect

from .helpers import configmap


@pytest.mark.parametrize("code", [500, 503, 429])
def test_server_errors_are_transient(own_cluster: DevCluster, own_kube: Kube, code: int) -> None:
    own_kube.resource("v1", "ConfigMap")
    own_cluster.faults = FaultProfile(error_rate={"*": 1.0}, error_codes=(code,))

    with pytest.raises(ApiUnavailable, match="cannot get ConfigMap default/settings: ") as caught:
        own_kube.get("v1", "ConfigMap", "settings", "default")

    assert isinstance(caught.value, TransientError)


def test_apply_failures_name_the_object(own_cluster: DevCluster, own_kube: Kube) -> None:
    own_kube.resource("v1", "ConfigMap")
    own_cluster.faults = FaultProfile(error_rate={"patch": 1.0}, error_codes=(500,))

    with pytest.raises(ApiUnavailable, match="cannot apply ConfigMap default/settings: "):
        own_kube.apply(configmap("settings", "default"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_server_is_unavailable(devcluster: DevCluster, tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    devcluster.write_kubeconfig(path)
    config = yaml.safe_load(path.read_text())
    config["clusters"][0]["cluster"]["server"] = f"http://127.0.0.1:{free_port()}"
    path.write_text(yaml.safe_dump(config))

    with connect(str(path)) as kube, pytest.raises(ApiUnavailable, match="the API server is unavailable"):
        kube.get("v1", "ConfigMap", "settings", "default")
