"""pods/{name}/log: what a LogSource holds, filtered (tailLines, sinceTime, timestamps, limitBytes) and followed
until the container ends, and the kubelet's refusals (which container, not started, no previous instance)."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from engine.apiserver.logs import LogLine
from engine.devcluster.cluster import DevCluster

from .helpers import http_call, wait_for


class ScriptedLogs:
    """A LogSource whose lines the test writes (what a real runtime would capture from the process)."""

    def __init__(self) -> None:
        self._lines: dict[tuple[str, str, str], list[LogLine]] = {}
        self._written = threading.Condition()

    def write(self, namespace: str, pod: str, container: str, time: str, text: str) -> None:
        with self._written:
            self._lines.setdefault((namespace, pod, container), []).append(LogLine(time, text.encode()))
            self._written.notify_all()

    def read(self, namespace: str, pod: str, uid: str, container: str, *, previous: bool) -> Sequence[LogLine]:
        with self._written:
            return list(self._lines.get((namespace, pod, container), []))

    def wait(self, namespace: str, pod: str, uid: str, container: str, seen: int, timeout: float) -> None:
        with self._written:
            self._written.wait_for(lambda: len(self._lines.get((namespace, pod, container), [])) > seen, timeout)


@pytest.fixture
def logged(own_cluster_factory: Callable[..., DevCluster]) -> tuple[DevCluster, ScriptedLogs]:
    cluster = own_cluster_factory(simulate=True, nodes=("node1",))
    source = ScriptedLogs()
    cluster.api.logs = source
    return cluster, source


def running_pod(cluster: DevCluster, name: str, containers: Sequence[str] = ("main",)) -> str:
    body = {"metadata": {"name": name},
            "spec": {"containers": [{"name": c, "image": "busybox"} for c in containers]}}
    code, answer = cluster.request("POST", "/api/v1/namespaces/default/pods", body=body)
    assert code == 201, answer
    path = f"/api/v1/namespaces/default/pods/{name}"
    wait_for(cluster, lambda: cluster.request("GET", path)[1].get("status", {}).get("phase") == "Running")
    return f"{path}/log"


def text_of(cluster: DevCluster, path: str, **query: str) -> Any:
    answer = http_call(cluster, "GET", path, query=query)
    assert answer.status == 200, answer.body
    assert answer.headers["Content-Type"] == "text/plain"
    return answer.body.decode() if isinstance(answer.body, bytes) else answer.body


def test_a_log_is_what_the_source_holds_filtered_as_asked(logged: tuple[DevCluster, ScriptedLogs]) -> None:
    cluster, source = logged
    path = running_pod(cluster, "talker")
    for second, text in ((1, "one\n"), (2, "two\n"), (3, "three\n")):
        source.write("default", "talker", "main", f"2026-01-01T00:00:0{second}.000000001Z", text)
    assert text_of(cluster, path) == "one\ntwo\nthree\n"
    assert text_of(cluster, path, tailLines="2") == "two\nthree\n"
    assert text_of(cluster, path, tailLines="1", timestamps="true") == "2026-01-01T00:00:03.000000001Z three\n"
    assert text_of(cluster, path, sinceTime="2026-01-01T00:00:02Z") == "two\nthree\n"
    assert text_of(cluster, path, limitBytes="6") == "one\ntw"


def test_a_followed_log_streams_new_lines_until_the_pod_goes(logged: tuple[DevCluster, ScriptedLogs]) -> None:
    cluster, source = logged
    path = running_pod(cluster, "streamer")
    source.write("default", "streamer", "main", "2026-01-01T00:00:01Z", "first\n")
    conn = http.client.HTTPConnection("127.0.0.1", cluster.port, timeout=30)
    conn.request("GET", f"{path}?follow=true")
    response = conn.getresponse()
    try:
        assert response.status == 200
        assert response.read1() == b"first\n"
        source.write("default", "streamer", "main", "2026-01-01T00:00:02Z", "second\n")
        assert response.read1() == b"second\n"
        cluster.request("DELETE", "/api/v1/namespaces/default/pods/streamer", query={"gracePeriodSeconds": "0"})
        assert response.read() == b""  # the stream ends with the pod
    finally:
        conn.close()


def test_the_kubelets_refusals(logged: tuple[DevCluster, ScriptedLogs]) -> None:
    cluster, _ = logged
    path = running_pod(cluster, "pair", containers=("app", "sidecar"))
    unnamed = http_call(cluster, "GET", path)
    assert unnamed.status == 400
    assert unnamed.body["message"] == "a container name must be specified for pod pair, choose one of: [app sidecar]"
    unknown = http_call(cluster, "GET", path, query={"container": "other"})
    assert unknown.status == 400 and unknown.body["message"] == "container other is not valid for pod pair"
    negative = http_call(cluster, "GET", path, query={"container": "app", "tailLines": "-1"})
    assert negative.status == 422 and negative.body["details"]["causes"][0]["field"] == "tailLines"
    previous = http_call(cluster, "GET", path, query={"container": "app", "previous": "true"})
    assert previous.status == 400 and "previous terminated container" in previous.body["message"]
    written = http_call(cluster, "PUT", path, body={})
    assert written.status == 405
    missing = http_call(cluster, "GET", "/api/v1/namespaces/default/pods/ghost/log")
    assert missing.status == 404 and missing.body["message"] == 'pods "ghost" not found'
