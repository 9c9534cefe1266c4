"""core/v1 and events.k8s.io/v1 Events are one storage: what is written through one API is read, listed, watched,
patched and deleted through the other, under the other's field names, with the real server's validation."""

from __future__ import annotations

import json
from typing import Any

from engine.devcluster.backends import Cluster

from .helpers import connection

CORE, EVENTS = "/api/v1", "/apis/events.k8s.io/v1"


def core_event(namespace: str, name: str = "e1") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "labels": {"a": "b"}},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": namespace, "uid": "u1", "apiVersion": "v1",
                               "fieldPath": "spec.containers{m}"},
            "reason": "Started", "message": "hello", "type": "Normal", "count": 3,
            "source": {"component": "kubelet", "host": "node-1"}, "firstTimestamp": "2026-01-01T00:00:00Z",
            "lastTimestamp": "2026-01-01T00:01:00Z", "reportingComponent": "kubelet", "reportingInstance": "node-1",
            "action": "Start", "related": {"kind": "Node", "name": "node-1"}}


def events_event(namespace: str, name: str = "e2") -> dict[str, Any]:
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name},
            "regarding": {"kind": "Pod", "name": "p", "namespace": namespace}, "related": {"kind": "Node", "name": "n"},
            "reason": "Pulled", "note": "pulled it", "type": "Warning", "action": "Pull",
            "reportingController": "example.com/ctl", "reportingInstance": "ctl-1",
            "eventTime": "2026-01-01T00:00:00.123456Z",
            "series": {"count": 2, "lastObservedTime": "2026-01-01T00:02:00.000000Z"}}


def create(cluster: Cluster, api: str, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
    code, created = cluster.request("POST", f"{api}/namespaces/{namespace}/events", body=body)
    assert code == 201, created
    return created


def read(cluster: Cluster, api: str, namespace: str, name: str) -> dict[str, Any]:
    code, body = cluster.request("GET", f"{api}/namespaces/{namespace}/events/{name}")
    assert code == 200, body
    body["metadata"].pop("managedFields", None)
    return body


def test_a_core_event_reads_as_an_events_k8s_io_event(devcluster: Cluster, namespace: str) -> None:
    created = create(devcluster, CORE, namespace, core_event(namespace))
    seen = read(devcluster, EVENTS, namespace, "e1")
    original = core_event(namespace)
    assert seen["apiVersion"] == "events.k8s.io/v1" and seen["metadata"]["uid"] == created["metadata"]["uid"]
    assert {k: seen.get(k) for k in ("regarding", "note", "reportingController", "reportingInstance",
                                     "deprecatedSource", "deprecatedCount", "deprecatedFirstTimestamp",
                                     "deprecatedLastTimestamp", "eventTime", "action", "reason", "type")} == {
        "regarding": original["involvedObject"], "note": "hello", "reportingController": "kubelet",
        "reportingInstance": "node-1", "deprecatedSource": original["source"], "deprecatedCount": 3,
        "deprecatedFirstTimestamp": "2026-01-01T00:00:00Z", "deprecatedLastTimestamp": "2026-01-01T00:01:00Z",
        "eventTime": None, "action": "Start", "reason": "Started", "type": "Normal"}
    assert not {"involvedObject", "message", "reportingComponent", "source", "count"} & set(seen)


def test_an_events_k8s_io_event_reads_as_a_core_event(devcluster: Cluster, namespace: str) -> None:
    create(devcluster, EVENTS, namespace, events_event(namespace))
    seen = read(devcluster, CORE, namespace, "e2")
    original = events_event(namespace)
    assert seen["apiVersion"] == "v1"
    assert {k: seen.get(k) for k in ("involvedObject", "message", "reportingComponent", "reportingInstance", "source",
                                     "firstTimestamp", "lastTimestamp", "eventTime", "series")} == {
        "involvedObject": original["regarding"], "message": "pulled it", "reportingComponent": "example.com/ctl",
        "reportingInstance": "ctl-1", "source": {}, "firstTimestamp": None, "lastTimestamp": None,
        "eventTime": original["eventTime"], "series": original["series"]}


def test_both_apis_list_and_delete_the_same_events(devcluster: Cluster, namespace: str) -> None:
    create(devcluster, CORE, namespace, core_event(namespace))
    create(devcluster, EVENTS, namespace, events_event(namespace))
    for api in (CORE, EVENTS):
        listed = devcluster.request("GET", f"{api}/namespaces/{namespace}/events")[1]
        assert {"e1", "e2"} <= {i["metadata"]["name"] for i in listed["items"]}
    code, _ = devcluster.request("DELETE", f"{EVENTS}/namespaces/{namespace}/events/e1")
    assert code == 200
    assert devcluster.request("GET", f"{CORE}/namespaces/{namespace}/events/e1")[0] == 404


def test_a_patch_through_one_api_is_one_version_of_the_other(devcluster: Cluster, namespace: str) -> None:
    create(devcluster, CORE, namespace, core_event(namespace))
    code, patched = devcluster.request("PATCH", f"{EVENTS}/namespaces/{namespace}/events/e1",
                                       body={"metadata": {"labels": {"seen": "yes"}}},
                                       content_type="application/merge-patch+json")
    assert code == 200 and patched["note"] == "hello"
    core = read(devcluster, CORE, namespace, "e1")
    assert core["metadata"]["labels"] == {"a": "b", "seen": "yes"}
    assert core["metadata"]["resourceVersion"] == patched["metadata"]["resourceVersion"]


def test_an_events_k8s_io_watch_sees_core_events(devcluster: Cluster, namespace: str) -> None:
    start = devcluster.request("GET", f"{EVENTS}/namespaces/{namespace}/events")[1]["metadata"]["resourceVersion"]
    create(devcluster, CORE, namespace, core_event(namespace))
    conn = connection(devcluster, timeout=10)
    conn.request("GET", f"{EVENTS}/namespaces/{namespace}/events?watch=1&timeoutSeconds=1&resourceVersion={start}")
    lines = [json.loads(line) for line in conn.getresponse().read().splitlines()]
    conn.close()
    assert [(e["type"], e["object"]["apiVersion"], e["object"]["note"]) for e in lines] == [
        ("ADDED", "events.k8s.io/v1", "hello")]


def test_events_k8s_io_field_selectors_use_its_own_names(devcluster: Cluster, namespace: str) -> None:
    create(devcluster, CORE, namespace, core_event(namespace))
    path = f"{EVENTS}/namespaces/{namespace}/events"
    for selector, names in (("regarding.name=p", ["e1"]), ("regarding.name=q", []),
                            ("reportingController=kubelet", ["e1"]), ("type=Warning", [])):
        code, body = devcluster.request("GET", path, query={"fieldSelector": selector})
        assert code == 200 and [i["metadata"]["name"] for i in body["items"]] == names, selector
    code, body = devcluster.request("GET", path, query={"fieldSelector": "involvedObject.name=p"})
    assert (code, body["message"]) == (400, "field label not supported: involvedObject.name")


def test_an_events_k8s_io_event_needs_its_event_time_and_a_matching_namespace(devcluster: Cluster,
                                                                              namespace: str) -> None:
    minimal = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e3"},
               "regarding": {"kind": "Pod", "name": "p"}, "reason": "R", "note": "n", "type": "Normal"}
    code, body = devcluster.request("POST", f"{EVENTS}/namespaces/{namespace}/events", body=minimal)
    assert code == 422
    assert body["message"] == ('Event "e3" is invalid: [involvedObject.namespace: Invalid value: "": does not match '
                               'event.namespace, eventTime: Required value]')
    assert (body["details"]["kind"], "group" in body["details"]) == ("Event", False)


def test_an_events_k8s_io_update_keeps_the_event_immutable_but_its_series(devcluster: Cluster,
                                                                         namespace: str) -> None:
    create(devcluster, EVENTS, namespace, events_event(namespace))
    path = f"{EVENTS}/namespaces/{namespace}/events/e2"

    def patched(patch: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return devcluster.request("PATCH", path, body=patch, content_type="application/merge-patch+json")

    code, body = patched({"note": "changed", "type": "Normal"})
    assert (code, body["message"]) == (422, 'Event "e2" is invalid: [message: Invalid value: "changed": field is '
                                            'immutable, type: Invalid value: "Normal": field is immutable]')
    code, body = patched({"regarding": {"name": "q"}})
    assert body["message"] == (f'Event "e2" is invalid: involvedObject: Invalid value: {{"Kind":"Pod","Namespace":'
                               f'"{namespace}","Name":"q","UID":"","APIVersion":"","ResourceVersion":"","FieldPath":'
                               '""}: field is immutable')
    code, body = patched({"series": {"count": 3, "lastObservedTime": "2026-01-01T00:03:00.000000Z"}})
    assert code == 200 and body["series"]["count"] == 3
    code, body = devcluster.request("PATCH", f"{CORE}/namespaces/{namespace}/events/e2",
                                    body={"message": "through core"}, content_type="application/merge-patch+json")
    assert code == 200 and read(devcluster, EVENTS, namespace, "e2")["note"] == "through core"
