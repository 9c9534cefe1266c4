"""Bearer-token authentication: 401 Status without the token, access with it, and a kubeconfig that carries it.

Dev backend only: bearer-token authentication is how the dev backend secures itself; the real backend uses client
certificates and RBAC.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from engine.devcluster.cluster import DevCluster

from .helpers import http_call

pytestmark = pytest.mark.dev_only("see the module docstring")


def test_without_the_token_requests_are_unauthorized(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory(token="s3cret")
    response = http_call(cluster, "GET", "/api/v1/namespaces")
    assert response.status == 401
    assert response.body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                             "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


def test_a_wrong_token_is_unauthorized(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory(token="s3cret")
    response = http_call(cluster, "GET", "/version", headers={"Authorization": "Bearer wrong"})
    assert response.status == 401


def test_the_token_grants_access(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory(token="s3cret")
    response = http_call(cluster, "GET", "/api/v1/namespaces", headers={"Authorization": "Bearer s3cret"})
    assert response.status == 200


def test_the_kubeconfig_carries_the_token(own_cluster_factory: Callable[..., DevCluster], tmp_path: Path) -> None:
    cluster = own_cluster_factory(token="s3cret")
    path = cluster.write_kubeconfig(tmp_path / "config")
    assert path.stat().st_mode & 0o077 == 0
    api = config.new_client_from_config(config_file=str(path), context="kplan-dev")
    names = [ns.metadata.name for ns in client.CoreV1Api(api).list_namespace().items]
    assert "default" in names


def test_a_client_without_credentials_gets_401(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory(token="s3cret")
    configuration = client.Configuration()
    configuration.host = cluster.url
    with pytest.raises(ApiException) as err:
        client.CoreV1Api(client.ApiClient(configuration)).list_namespace()
    assert err.value.status == 401
