"""Watch streams through watch.Watch and raw HTTP: start points, resume, 410 Expired, selector transitions,
bookmarks, watch-list and timeouts."""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from engine.devcluster.cluster import DevCluster

from .helpers import configmap, connection, make_api_client


def events(core: client.CoreV1Api, namespace: str, **kwargs: Any) -> list[tuple[str, str, str]]:
    """(type, name, resourceVersion) of every event until the server ends the stream (timeoutSeconds)."""
    stream = watch.Watch().stream(core.list_namespaced_config_map, namespace, timeout_seconds=1, **kwargs)
    return [(e["type"], e["raw_object"]["metadata"].get("name", ""), e["raw_object"]["metadata"]["resourceVersion"])
            for e in stream]


def test_a_watch_from_a_list_version_yields_exactly_the_later_changes(core: client.CoreV1Api,
                                                                      namespace: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("before"))
    listed = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.create_namespaced_config_map(namespace, configmap("a"))
    core.patch_namespaced_config_map("a", namespace, {"data": {"x": "1"}})
    core.delete_namespaced_config_map("a", namespace)
    seen = events(core, namespace, resource_version=listed)
    assert [(t, n) for t, n, _ in seen] == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    versions = [int(rv) for _, _, rv in seen]
    assert versions == sorted(versions) and versions[0] > int(listed)


def test_a_watch_without_version_starts_with_the_current_objects(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("a"))
    core.create_namespaced_config_map(namespace, configmap("b"))
    mine = [(t, n) for t, n, _ in events(core, namespace) if n != "kube-root-ca.crt"]  # the cluster's own
    assert sorted(mine) == [("ADDED", "a"), ("ADDED", "b")]


def test_a_deleted_event_carries_the_deletion_resource_version(core: client.CoreV1Api, namespace: str) -> None:
    created = core.create_namespaced_config_map(namespace, configmap("a"))
    core.delete_namespaced_config_map("a", namespace)
    [deleted] = events(core, namespace, resource_version=created.metadata.resource_version)
    assert deleted[0] == "DELETED" and int(deleted[2]) > int(created.metadata.resource_version)


def test_selector_transitions_are_added_and_deleted(core: client.CoreV1Api, namespace: str) -> None:
    start = core.create_namespaced_config_map(namespace, configmap("a", labels={"app": "x"}))
    core.patch_namespaced_config_map("a", namespace, {"metadata": {"labels": {"app": "web"}}})
    core.patch_namespaced_config_map("a", namespace, {"metadata": {"labels": {"app": "x"}}})
    seen = events(core, namespace, resource_version=start.metadata.resource_version, label_selector="app=web")
    assert [t for t, _, _ in seen] == ["ADDED", "DELETED"]


def test_field_selector_on_the_name_filters_the_stream(core: client.CoreV1Api, namespace: str) -> None:
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.create_namespaced_config_map(namespace, configmap("a"))
    core.create_namespaced_config_map(namespace, configmap("b"))
    seen = events(core, namespace, resource_version=start, field_selector="metadata.name=b")
    assert [(t, n) for t, n, _ in seen] == [("ADDED", "b")]


def test_an_expired_version_is_a_410_error_event(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory(watch_history=3)
    for i in range(6):
        cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=configmap(f"c{i}"))
    conn = http.client.HTTPConnection("127.0.0.1", cluster.port, timeout=10)
    conn.request("GET", "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1")
    resp = conn.getresponse()
    lines = resp.read().splitlines()
    conn.close()
    assert resp.status == 200 and len(lines) == 1
    event = json.loads(lines[0])
    assert event["type"] == "ERROR"
    assert {k: event["object"][k] for k in ("kind", "status", "reason", "code")} == {
        "kind": "Status", "status": "Failure", "reason": "Expired", "code": 410}
    assert event["object"]["message"].startswith("too old resource version: 1 (")


def test_python_watch_raises_410_when_resuming_is_impossible(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory(watch_history=3)
    for i in range(6):
        cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=configmap(f"c{i}"))
    core = client.CoreV1Api(make_api_client(cluster))
    with pytest.raises(ApiException) as err:
        list(watch.Watch().stream(core.list_namespaced_config_map, "default", resource_version="1"))
    assert err.value.status == 410


def test_a_list_with_an_expired_continue_token_is_410(own_cluster_factory: Callable[..., DevCluster]) -> None:
    cluster = own_cluster_factory(watch_history=2)
    for i in range(3):
        cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=configmap(f"c{i}"))
    code, page = cluster.request("GET", "/api/v1/namespaces/default/configmaps", query={"limit": "1"})
    for i in range(3, 6):
        cluster.request("POST", "/api/v1/namespaces/default/configmaps", body=configmap(f"c{i}"))
    code, body = cluster.request("GET", "/api/v1/namespaces/default/configmaps",
                                 query={"limit": "1", "continue": page["metadata"]["continue"]})
    assert code == 410 and body["reason"] == "Expired"


def watch_lines(cluster: DevCluster, namespace: str, query: str) -> list[dict[str, Any]]:
    """Every line of a watch of the ConfigMap "a" that ends on its timeoutSeconds."""
    conn = connection(cluster, timeout=10)
    conn.request("GET", f"/api/v1/namespaces/{namespace}/configmaps?watch=1&fieldSelector=metadata.name%3Da&{query}")
    lines = conn.getresponse().read().splitlines()
    conn.close()
    return [json.loads(line) for line in lines]


@pytest.mark.dev_only("the real watch cache schedules this bookmark on a 1 s timer bucket: it comes once, twice or, "
                      "when the bucket fires before the watcher is registered, not at all")
def test_a_bookmark_comes_before_the_deadline_with_only_the_resource_version(
        devcluster: DevCluster, namespace: str, core: client.CoreV1Api) -> None:
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    created = core.create_namespaced_config_map(namespace, configmap("a"))
    lines = watch_lines(devcluster, namespace, f"allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion={start}")
    assert [line["type"] for line in lines] == ["ADDED", "BOOKMARK"]  # 2 s before the deadline; none at its end
    bookmark = lines[-1]["object"]
    assert (bookmark["kind"], bookmark["apiVersion"], list(bookmark["metadata"])) == ("ConfigMap", "v1",
                                                                                    ["resourceVersion"])
    assert int(bookmark["metadata"]["resourceVersion"]) >= int(created.metadata.resource_version)


@pytest.mark.parametrize("bookmarks", ["true", "false"])
def test_a_watch_too_short_for_a_bookmark_ends_with_its_last_event(devcluster: DevCluster, namespace: str,
                                                                   core: client.CoreV1Api, bookmarks: str) -> None:
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    core.create_namespaced_config_map(namespace, configmap("a"))
    lines = watch_lines(devcluster, namespace, f"allowWatchBookmarks={bookmarks}&timeoutSeconds=1"
                                               f"&resourceVersion={start}")
    assert [line["type"] for line in lines] == ["ADDED"]


@pytest.mark.parametrize("version", ["", "0"])
def test_a_watch_from_now_marks_the_end_of_its_initial_events(devcluster: DevCluster, namespace: str,
                                                              core: client.CoreV1Api, version: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("a"))
    lines = watch_lines(devcluster, namespace, f"allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion={version}")
    types = [line["type"] for line in lines]  # a loaded real server may repeat the bookmark; never an event
    assert types[:2] == ["ADDED", "BOOKMARK"] and set(types[2:]) <= {"BOOKMARK"}
    assert lines[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    without = watch_lines(devcluster, namespace, "timeoutSeconds=1")
    assert [line["type"] for line in without] == ["ADDED"]


def test_watch_list_ends_its_initial_events_with_a_bookmark(devcluster: DevCluster, namespace: str,
                                                            core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map(namespace, configmap("a"))
    conn = connection(devcluster, timeout=10)
    conn.request("GET", f"/api/v1/namespaces/{namespace}/configmaps?watch=true&sendInitialEvents=true"
                        "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=30"
                        "&fieldSelector=metadata.name%3Da")  # not the namespace's own kube-root-ca.crt
    resp = conn.getresponse()
    first, second = json.loads(resp.readline()), json.loads(resp.readline())
    conn.close()
    assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "a")
    assert second["type"] == "BOOKMARK"
    assert second["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_send_initial_events_without_bookmarks_streams_the_initial_events(devcluster: DevCluster, namespace: str,
                                                                          core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map(namespace, configmap("a"))
    conn = connection(devcluster, timeout=10)
    conn.request("GET", f"/api/v1/namespaces/{namespace}/configmaps?watch=true&sendInitialEvents=true"
                        "&resourceVersionMatch=NotOlderThan&fieldSelector=metadata.name%3Da&timeoutSeconds=5")
    resp = conn.getresponse()
    first = json.loads(resp.readline())
    conn.close()
    assert resp.status == 200 and (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "a")


def test_events_are_flushed_one_line_at_a_time(devcluster: DevCluster, namespace: str,
                                               core: client.CoreV1Api) -> None:
    start = core.list_namespaced_config_map(namespace).metadata.resource_version
    conn = connection(devcluster, timeout=10)
    conn.request("GET", f"/api/v1/namespaces/{namespace}/configmaps?watch=true&resourceVersion={start}")
    resp = conn.getresponse()
    assert resp.getheader("Transfer-Encoding") == "chunked"
    core.create_namespaced_config_map(namespace, configmap("a"))
    line = resp.readline()
    conn.close()
    assert line.endswith(b"\n") and json.loads(line)["object"]["metadata"]["name"] == "a"


def test_watch_objects_carry_kind_and_api_version(core: client.CoreV1Api, namespace: str) -> None:
    core.create_namespaced_config_map(namespace, configmap("a"))
    stream = watch.Watch().stream(core.list_namespaced_config_map, namespace, timeout_seconds=1)
    raw = [e["raw_object"] for e in stream]
    assert raw and all(o["kind"] == "ConfigMap" and o["apiVersion"] == "v1" for o in raw)


def test_a_legacy_watch_path_streams_too(devcluster: DevCluster, namespace: str, core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map(namespace, configmap("a"))
    conn = connection(devcluster, timeout=10)
    conn.request("GET", f"/api/v1/watch/namespaces/{namespace}/configmaps?timeoutSeconds=1")
    lines = conn.getresponse().read().splitlines()
    conn.close()
    assert json.loads(lines[0])["type"] == "ADDED"


def test_a_watch_across_namespaces_sees_every_namespace(core: client.CoreV1Api, namespace: str) -> None:
    start = core.list_config_map_for_all_namespaces().metadata.resource_version
    core.create_namespaced_config_map(namespace, configmap("a"))
    core.create_namespaced_config_map("default", configmap(f"{namespace}-b"))
    stream = watch.Watch().stream(core.list_config_map_for_all_namespaces, resource_version=start,
                                  timeout_seconds=1)
    names = {e["object"].metadata.name for e in stream}
    core.delete_namespaced_config_map(f"{namespace}-b", "default")
    assert {"a", f"{namespace}-b"} <= names
