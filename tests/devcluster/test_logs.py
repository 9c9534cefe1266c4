"""pods/{name}/log on both backends, through the node's kubelet API (the simulated kubelet's, over HTTPS with the
cluster's certificates): what the container printed, filtered (tailLines, sinceTime, sinceSeconds, timestamps,
limitBytes) and followed until the container ends, and the refusals of the API server (which container, bad
options, a node without an address or a kubelet) and of the kubelet (no previous run), in the real server's words;
the kubelet API answers only clients with a certificate of the cluster's CA.
"""

from __future__ import annotations

import http.client
import re
import ssl
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from engine.devcluster.backends import Cluster
from engine.devcluster.cluster import DevCluster
from engine.devcluster.real import RealCluster

from .helpers import connection, http_call, wait_for

OUTPUT = "devcluster.kplan.dev/output-"
DURATION = "devcluster.kplan.dev/duration"
FAIL = "devcluster.kplan.dev/fail"
WAIT = 30.0
STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z"  # Go's RFC3339Nano


@pytest.fixture
def space(simcluster: Cluster) -> Iterator[str]:
    """A namespace of the simulated cluster's (pods are admitted once its `default` ServiceAccount exists)."""
    name = f"log-{uuid.uuid4().hex[:10]}"
    code, body = simcluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": name}})
    assert code == 201, body
    wait_for(simcluster, lambda: simcluster.request(
        "GET", f"/api/v1/namespaces/{name}/serviceaccounts/default")[0] == 200, WAIT)
    yield name
    simcluster.request("DELETE", f"/api/v1/namespaces/{name}")


def create_pod(cluster: Cluster, namespace: str, name: str, output: dict[str, str], **spec: Any) -> str:
    notes = {**{OUTPUT + c: text for c, text in output.items()}, **spec.pop("annotations", {})}
    body = {"metadata": {"name": name, "annotations": notes},
            "spec": {"containers": [{"name": c, "image": "busybox"} for c in output], **spec}}
    code, answer = cluster.request("POST", f"/api/v1/namespaces/{namespace}/pods", body=body)
    assert code == 201, answer
    return f"/api/v1/namespaces/{namespace}/pods/{name}"


def phase_of(cluster: Cluster, path: str) -> str:
    return str((cluster.request("GET", path)[1].get("status") or {}).get("phase") or "")


def text_of(cluster: Cluster, path: str, **query: str) -> str:
    answer = http_call(cluster, "GET", f"{path}/log", query=query)
    assert answer.status == 200, answer.body
    assert answer.headers["Content-Type"] == "text/plain"
    return answer.raw.decode()


def refusal(cluster: Cluster, path: str, **query: str) -> tuple[int, dict[str, Any]]:
    code, body = cluster.request("GET", f"{path}/log", query=query)
    return code, body


def test_a_log_is_what_the_container_printed_filtered_as_asked(simcluster: Cluster, space: str) -> None:
    path = create_pod(simcluster, space, "talker", {"main": "one\ntwo\nthree\n"})
    wait_for(simcluster, lambda: phase_of(simcluster, path) == "Running", WAIT)

    assert text_of(simcluster, path) == "one\ntwo\nthree\n"
    assert text_of(simcluster, path, tailLines="2") == "two\nthree\n"
    assert text_of(simcluster, path, limitBytes="6") == "one\ntw"
    assert text_of(simcluster, path, sinceSeconds="3600") == "one\ntwo\nthree\n"
    assert text_of(simcluster, path, sinceTime="2999-01-01T00:00:00Z") == ""
    stamped = text_of(simcluster, path, tailLines="1", timestamps="true")
    assert re.fullmatch(f"{STAMP} three\n", stamped), stamped


def test_a_followed_log_streams_until_the_container_ends(simcluster: Cluster, space: str) -> None:
    path = create_pod(simcluster, space, "brief", {"main": "started\n"}, restartPolicy="Never",
                      annotations={DURATION: "3s"})
    wait_for(simcluster, lambda: phase_of(simcluster, path) == "Running", WAIT)
    conn = connection(simcluster, timeout=WAIT)
    try:
        conn.request("GET", f"{path}/log?follow=true")
        response = conn.getresponse()
        assert response.status == 200
        assert response.read1() == b"started\n"
        assert response.read() == b""  # the stream ends with the container
        wait_for(simcluster, lambda: phase_of(simcluster, path) == "Succeeded", WAIT)
    finally:
        conn.close()


def test_a_restarting_container_shows_its_last_run_and_previous_it(simcluster: Cluster, space: str) -> None:
    path = create_pod(simcluster, space, "crashing", {"main": "about to fail\n"}, annotations={FAIL: "true"})

    def backing_off() -> bool:
        statuses = (simcluster.request("GET", path)[1].get("status") or {}).get("containerStatuses") or [{}]
        return bool((statuses[0].get("state") or {}).get("waiting", {}).get("reason") == "CrashLoopBackOff")

    wait_for(simcluster, backing_off, WAIT)
    assert text_of(simcluster, path) == "about to fail\n"
    assert text_of(simcluster, path, previous="true") == "about to fail\n"


def test_refusals_are_the_real_servers(simcluster: Cluster, space: str) -> None:
    path = create_pod(simcluster, space, "pair", {"app": "a\n", "sidecar": "s\n"})
    wait_for(simcluster, lambda: phase_of(simcluster, path) == "Running", WAIT)

    assert refusal(simcluster, path) == (400, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "BadRequest", "code": 400,
        "message": "a container name must be specified for pod pair, choose one of: [app sidecar]"})
    code, body = refusal(simcluster, path, container="other")
    assert (code, body["message"]) == (400, "container other is not valid for pod pair")
    code, body = refusal(simcluster, path, container="app", previous="true")
    assert (code, body["reason"]) == (400, "BadRequest")
    assert body["message"] == 'previous terminated container "app" in pod "pair" not found'
    code, body = refusal(simcluster, path, container="app", tailLines="-1")
    assert (code, body["details"]["causes"]) == (422, [{
        "reason": "FieldValueInvalid", "message": "Invalid value: -1: must be greater than or equal to 0",
        "field": "tailLines"}])
    code, body = refusal(simcluster, path, container="app", sinceSeconds="5", sinceTime="2026-01-01T00:00:00Z")
    assert (code, body["message"]) == (422, 'PodLogOptions "pair" is invalid: []: Forbidden: at most one of '
                                            '`sinceTime` or `sinceSeconds` may be specified')
    code, body = refusal(simcluster, path, container="app", stream="Stdout")
    assert (code, body["message"]) == (422, 'PodLogOptions "pair" is invalid: stream: Forbidden: may not be specified')
    code, body = refusal(simcluster, path, container="app", tailLines="x")
    assert (code, body["message"]) == (400, 'strconv.ParseInt: parsing "x": invalid syntax')
    code, body = refusal(simcluster, path, container="app", sinceTime="yesterday")
    assert (code, body["message"]) == (400, 'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot '
                                            'parse "yesterday" as "2006"')
    code, body = refusal(simcluster, f"/api/v1/namespaces/{space}/pods/ghost")
    assert (code, body["message"]) == (404, 'pods "ghost" not found')


def test_a_pod_not_scheduled_yet_has_no_log(simcluster: Cluster, space: str) -> None:
    path = create_pod(simcluster, space, "nowhere", {"main": "never\n"},
                      nodeSelector={"kplan.dev/no-such-node": "x"})
    answer = http_call(simcluster, "GET", f"{path}/log")
    assert (answer.status, answer.raw) == (204, b"")  # no node to ask: No Content
    assert "Content-Type" not in answer.headers


@pytest.fixture
def stray_nodes(devcluster: Cluster) -> Iterator[str]:
    """A suffix for Nodes of the test's own (no kubelet plays them), deleted afterwards."""
    suffix = uuid.uuid4().hex[:8]
    yield suffix
    for name in ("closed", "bare"):
        devcluster.request("DELETE", f"/api/v1/nodes/{name}-{suffix}")


def test_a_node_without_an_address_or_a_kubelet_is_an_error_of_the_server(devcluster: Cluster, namespace: str,
                                                                           stray_nodes: str) -> None:
    closed, bare = f"closed-{stray_nodes}", f"bare-{stray_nodes}"
    for node in (closed, bare):
        assert devcluster.request("POST", "/api/v1/nodes", body={"metadata": {"name": node}})[0] == 201
    code, _ = devcluster.request("PATCH", f"/api/v1/nodes/{closed}/status", body={"status": {
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 1}}}}, content_type="application/merge-patch+json")
    assert code == 200
    for pod, node in (("on-closed", closed), ("on-bare", bare), ("on-none", f"none-{stray_nodes}")):
        body = {"metadata": {"name": pod}, "spec": {"nodeName": node, "containers": [{"name": "main",
                                                                                      "image": "busybox"}]}}
        assert devcluster.request("POST", f"/api/v1/namespaces/{namespace}/pods", body=body)[0] == 201
    base = f"/api/v1/namespaces/{namespace}/pods"

    code, body = refusal(devcluster, f"{base}/on-closed", tailLines="3")
    assert (code, body.get("reason")) == (500, None)
    assert body["message"] == (f'Get "https://127.0.0.1:1/containerLogs/{namespace}/on-closed/main?tailLines=3": '
                               "dial tcp 127.0.0.1:1: connect: connection refused")
    code, body = refusal(devcluster, f"{base}/on-bare")
    assert (code, body["message"]) == (500, "no preferred addresses found; known addresses: []")
    code, body = refusal(devcluster, f"{base}/on-none")
    assert (code, body["message"]) == (404, f'pods "none-{stray_nodes}" not found')


def kubelet_port(cluster: Cluster) -> int:
    node = cluster.request("GET", f"/api/v1/nodes/{cluster.nodes[0]}")[1]
    assert [a for a in node["status"]["addresses"] if a["type"] == "InternalIP"] == [
        {"type": "InternalIP", "address": "127.0.0.1"}]
    return int(node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"])


def kubelet_client(cluster: Cluster) -> ssl.SSLContext:
    """What the API server presents to the kubelet (a certificate of the cluster's CA) and checks it against."""
    if isinstance(cluster, RealCluster):
        return cluster.plane.ssl_context(cluster.plane.kubelet_client)
    assert isinstance(cluster, DevCluster) and cluster.api.kubelet_tls is not None
    return cluster.api.kubelet_tls


def test_the_kubelet_api_serves_the_clusters_clients_only(simcluster: Cluster) -> None:
    port = kubelet_port(simcluster)
    trusted = http.client.HTTPSConnection("127.0.0.1", port, timeout=WAIT, context=kubelet_client(simcluster))
    try:
        trusted.request("GET", "/healthz")
        answer = trusted.getresponse()
        assert (answer.status, answer.read()) == (200, b"ok")
    finally:
        trusted.close()
    anonymous = ssl.create_default_context()
    anonymous.check_hostname, anonymous.verify_mode = False, ssl.CERT_NONE  # no certificate to show
    stranger = http.client.HTTPSConnection("127.0.0.1", port, timeout=WAIT, context=anonymous)
    try:
        with pytest.raises((ssl.SSLError, ConnectionError, http.client.RemoteDisconnected)):
            stranger.request("GET", "/healthz")
            stranger.getresponse()
    finally:
        stranger.close()
