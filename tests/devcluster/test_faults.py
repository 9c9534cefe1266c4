"""Fault injection: API errors per verb (deterministic with a seed), Retry-After, watch cuts and expiry.

Dev backend only: fault injection is the dev cluster's own feature (the real backend's faults are process kills and
pauses, tested in the soak suite).
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable

import pytest
import urllib3
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from engine.apiserver.faults import FaultProfile, WatchCut
from engine.devcluster.cluster import DevCluster

from .helpers import configmap, http_call, make_api_client

pytestmark = pytest.mark.dev_only("see the module docstring")


def codes(cluster: DevCluster, n: int) -> list[int]:
    return [http_call(cluster, "GET", "/api/v1/namespaces/default/configmaps").status for _ in range(n)]


def test_faults_are_off_by_default(devcluster: DevCluster) -> None:
    assert not devcluster.faults.active
    assert set(codes(devcluster, 5)) == {200}


def test_an_error_rate_of_one_fails_every_request_of_that_verb(own_cluster_factory: Callable[..., DevCluster]
                                                               ) -> None:
    cluster = own_cluster_factory(faults=FaultProfile(error_rate={"list": 1.0}, error_codes=(503,)))
    response = http_call(cluster, "GET", "/api/v1/namespaces/default/configmaps")
    assert response.status == 503 and response.body["reason"] == "ServiceUnavailable"
    assert http_call(cluster, "GET", "/api/v1/namespaces/default").status == 200


def test_throttling_answers_429_with_retry_after(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory(faults=FaultProfile(error_rate={"*": 1.0}, error_codes=(429,),
                                                      retry_after_seconds=3))
    response = http_call(cluster, "POST", "/api/v1/namespaces/default/configmaps", body=configmap("a"))
    assert response.status == 429 and response.headers["Retry-After"] == "3"
    assert response.body["details"] == {"retryAfterSeconds": 3}


def test_the_same_seed_gives_the_same_faults(own_cluster_factory: Callable[..., DevCluster]) -> None:
    profile = FaultProfile(error_rate={"list": 0.5}, seed=7)
    first = codes(own_cluster_factory(faults=profile), 30)
    second = codes(own_cluster_factory(faults=profile), 30)
    assert first == second and {200} < set(first)


def test_faults_can_be_changed_at_run_time(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory()
    cluster.faults = FaultProfile(error_rate={"get": 1.0}, error_codes=(500,))
    assert http_call(cluster, "GET", "/api/v1/namespaces/default").status == 500
    cluster.faults = FaultProfile()
    assert http_call(cluster, "GET", "/api/v1/namespaces/default").status == 200


def test_in_process_requests_are_never_faulted(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory(faults=FaultProfile(error_rate={"*": 1.0}))
    assert cluster.request("GET", "/api/v1/namespaces/default")[0] == 200


def test_latency_still_answers(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory(faults=FaultProfile(latency_seconds=0.01, latency_jitter_seconds=0.01, seed=1))
    assert http_call(cluster, "GET", "/api/v1/namespaces/default").status == 200


def test_a_watch_ends_cleanly_after_n_events(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory(faults=FaultProfile(watch_max_events=2, watch_cut=WatchCut.END))
    for i in range(4):
        cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=configmap(f"c{i}"))
    conn = http.client.HTTPConnection("127.0.0.1", cluster.port, timeout=10)
    conn.request("GET", "/api/v1/namespaces/default/configmaps?watch=true")
    lines = conn.getresponse().read().splitlines()
    conn.close()
    assert [json.loads(line)["type"] for line in lines] == ["ADDED", "ADDED"]


def test_a_watch_cut_drops_the_connection(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory(faults=FaultProfile(watch_max_events=1, watch_cut=WatchCut.CLOSE))
    for i in range(3):
        cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=configmap(f"c{i}"))
    core = client.CoreV1Api(make_api_client(cluster))
    stream = watch.Watch().stream(core.list_namespaced_config_map, "default", timeout_seconds=30)
    with pytest.raises((urllib3.exceptions.ProtocolError, ApiException)):
        for _ in stream:
            pass


def test_expire_next_watch_sends_one_410(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory(faults=FaultProfile(expire_next_watch=True))
    first = http_call(cluster, "GET", "/api/v1/namespaces/default/configmaps",
                      query={"watch": "true", "timeoutSeconds": "1"})
    event = json.loads(first.body if isinstance(first.body, bytes) else json.dumps(first.body))
    assert event["type"] == "ERROR" and event["object"]["code"] == 410
    second = http_call(cluster, "GET", "/api/v1/namespaces/default/configmaps",
                       query={"watch": "true", "timeoutSeconds": "1", "resourceVersion": "0"})
    assert second.status == 200 and b"ERROR" not in (second.body if isinstance(second.body, bytes) else b"")


def test_the_python_watch_recovers_from_one_injected_expiry(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory(faults=FaultProfile(expire_next_watch=True))
    cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=configmap("a"))
    core = client.CoreV1Api(make_api_client(cluster))
    listed = core.list_namespaced_config_map("default").metadata.resource_version
    cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=configmap("b"))
    w = watch.Watch()
    for event in w.stream(core.list_namespaced_config_map, "default", resource_version=listed):
        assert event["object"].metadata.name == "b"
        w.stop()
        break
