"""The in-process API of DevCluster (request, subscribe, kubeconfig, stop) and the `kplan devcluster` command.

Dev backend only: the in-memory cluster's in-process API and the dev backend of `kplan devcluster` (the real
backend has its own tests in test_real_backend.py).
"""

from __future__ import annotations

import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.devcluster.cluster import DevCluster

from .helpers import configmap, http_call, served_by_the_cli

pytestmark = pytest.mark.dev_only("see the module docstring")


def test_request_runs_the_full_handler_stack(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory()
    code, body = cluster.request("POST", "/api/v1/namespaces/default/configmaps", body={"metadata": {"name": "Bad"}})
    assert code == 422 and body["reason"] == "Invalid"
    code, body = cluster.request("PATCH", "/api/v1/namespaces/default/configmaps/a",
                                 query={"fieldManager": "sim"}, body=configmap("a", {"x": "1"}),
                                 content_type="application/apply-patch+yaml")
    assert code == 201 and body["metadata"]["managedFields"][0]["manager"] == "sim"
    assert cluster.request("GET", "/api/v1/namespaces/default/configmaps/a?fieldSelector=x")[0] == 200


def test_subscribers_see_every_change_in_commit_order(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory()
    seen: list[tuple[str, str, str]] = []
    done = threading.Event()

    def on_event(kind: str, obj: dict[str, Any]) -> None:
        seen.append((kind, obj["kind"], obj["metadata"]["name"]))
        if kind == "DELETED":
            done.set()

    unsubscribe = cluster.subscribe(on_event)
    cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=configmap("a"))
    cluster.request("PATCH", "/api/v1/namespaces/default/configmaps/a", body={"data": {"x": "1"}},
                    content_type="application/merge-patch+json")
    cluster.request("DELETE", "/api/v1/namespaces/default/configmaps/a")
    assert done.wait(10)
    unsubscribe()
    assert seen == [("ADDED", "ConfigMap", "a"), ("MODIFIED", "ConfigMap", "a"), ("DELETED", "ConfigMap", "a")]


def test_a_subscription_to_some_kinds_gets_only_their_changes(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory()
    seen: list[str] = []
    done = threading.Event()

    def on_event(kind: str, obj: dict[str, Any]) -> None:
        seen.append(obj["kind"])
        done.set()

    unsubscribe = cluster.subscribe(on_event, kinds=[("v1", "ConfigMap")])
    cluster.request("POST", "/api/v1/namespaces/default/secrets", body={"metadata": {"name": "s"}})
    cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=configmap("a"))
    assert done.wait(10)  # changes come in commit order: the Secret's would have come first
    unsubscribe()
    assert seen == ["ConfigMap"]


def test_an_inline_subscription_has_each_change_before_the_write_returns(
        own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory()
    seen: list[tuple[str, dict[str, Any]]] = []
    unsubscribe = cluster.subscribe(lambda kind, obj: seen.append((kind, obj)), kinds=[("v1", "ConfigMap")],
                                    inline=True)
    cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=configmap("a", {"x": "1"}))
    assert [(kind, obj["metadata"]["name"]) for kind, obj in seen] == [("ADDED", "a")]
    seen[0][1]["data"]["x"] = "changed by the subscriber"  # its own copy: the stored object stays as it was
    assert cluster.request("GET", "/api/v1/namespaces/default/configmaps/a")[1]["data"] == {"x": "1"}
    cluster.request("POST", "/api/v1/namespaces/default/secrets", body={"metadata": {"name": "s"}})
    cluster.request("DELETE", "/api/v1/namespaces/default/configmaps/a")
    assert [(kind, obj["metadata"]["name"]) for kind, obj in seen] == [("ADDED", "a"), ("DELETED", "a")]
    unsubscribe()
    cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=configmap("b"))
    assert len(seen) == 2
    with pytest.raises(ValueError, match="does not serve Nothing"):
        cluster.subscribe(lambda kind, obj: None, kinds=[("v1", "Nothing")])


def test_a_shared_subscription_and_a_shared_request_hand_over_the_stored_object(
        own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory()
    seen: list[dict[str, Any]] = []
    unsubscribe = cluster.subscribe(lambda kind, obj: seen.append(obj), kinds=[("v1", "ConfigMap")], inline=True,
                                    shared=True)
    _, created = cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=configmap("a", {"x": "1"}),
                                 shared=True)
    unsubscribe()
    _, read = cluster.request("GET", "/api/v1/namespaces/default/configmaps/a", shared=True)
    _, copied = cluster.request("GET", "/api/v1/namespaces/default/configmaps/a")
    assert seen[0] is created is read  # no copies: what the store holds (never changed once committed)
    assert copied == read and copied is not read


def test_unsubscribed_callbacks_are_not_called(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory()
    seen: list[str] = []
    unsubscribe = cluster.subscribe(lambda kind, obj: seen.append(obj["metadata"]["name"]))
    unsubscribe()
    cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=configmap("late"))
    marker = threading.Event()
    stop = cluster.subscribe(lambda kind, obj: marker.set())
    cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=configmap("marker"))
    assert marker.wait(10)
    stop()
    assert seen == []


def test_the_kubeconfig_points_at_the_cluster(own_cluster_factory: Callable[..., DevCluster], tmp_path: Path) -> None:
    cluster = own_cluster_factory()
    path = cluster.write_kubeconfig(tmp_path / "nested" / "config", context="mine")
    document = yaml.safe_load(path.read_text())
    assert document["current-context"] == "mine"
    assert document["clusters"][0]["cluster"]["server"] == cluster.url
    assert cluster.url == f"http://127.0.0.1:{cluster.port}"


def test_stop_ends_open_watch_streams(own_cluster_factory: Callable[..., DevCluster]) -> None:
    import http.client
    cluster = own_cluster_factory()
    conn = http.client.HTTPConnection("127.0.0.1", cluster.port, timeout=30)
    conn.request("GET", "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0")
    resp = conn.getresponse()
    cluster.stop()
    try:
        remainder = resp.read()
    except (http.client.IncompleteRead, ConnectionError) as e:
        remainder = getattr(e, "partial", b"")
    conn.close()
    assert b"ERROR" not in remainder


def test_in_process_watch_is_refused(own_cluster_factory: Callable[..., DevCluster]) -> None:
    code, body = own_cluster_factory().request("GET", "/api/v1/configmaps", query={"watch": "true"})
    assert code == 400 and "subscribe" in body["message"]


def test_the_cli_serves_until_terminated(tmp_path: Path) -> None:
    with served_by_the_cli(tmp_path, "--no-simulate") as port:
        assert http_call(port, "GET", "/version").status == 200
        assert http_call(port, "GET", "/api/v1/nodes").body["items"] == []


def test_the_cli_simulates_three_labelled_nodes_unless_told_otherwise(tmp_path: Path) -> None:
    with served_by_the_cli(tmp_path) as port:
        nodes = http_call(port, "GET", "/api/v1/nodes").body["items"]
        assert [(n["metadata"]["name"], n["metadata"]["labels"]["node.kplan.dev/name"]) for n in nodes] == [
            ("node-1", "node-1"), ("node-2", "node-2"), ("node-3", "node-3")]


def test_a_client_that_resets_its_connection_leaves_no_traceback_in_the_log(tmp_path: Path) -> None:
    log = tmp_path / "devcluster.log"
    with log.open("w") as err, subprocess.Popen(
        [sys.executable, "-m", "engine.cli.main", "devcluster", "--no-simulate", "--kubeconfig", str(tmp_path / "kc")],
        stdout=subprocess.PIPE, stderr=err, text=True,
    ) as proc:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().split()[-1].rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
                           b"Content-Length: 1000\r\n\r\n{")
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
        assert http_call(port, "GET", "/version").status == 200  # still serving
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        proc.stdout.close()
    assert log.read_text() == "dev cluster stopped\n"
