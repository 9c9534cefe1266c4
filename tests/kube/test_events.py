"""Kube.event: core/v1 Events about an object, aggregated by (object, reason, message)."""

from __future__ import annotations

from engine.kube import Kube

from .helpers import configmap


def events_about(kube: Kube, namespace: str, name: str) -> list[dict]:
    found = kube.list("v1", "Event", namespace)
    return sorted((e for e in found if e["involvedObject"]["name"] == name), key=lambda e: e["message"])


def test_an_event_names_the_object_reason_and_component(kube: Kube, namespace: str) -> None:
    involved = kube.create(configmap("settings", namespace))

    kube.event(involved, "DriftCorrected", "re-applied .data.color", type="Warning")

    [event] = events_about(kube, namespace, "settings")
    assert event["involvedObject"] == {"apiVersion": "v1", "kind": "ConfigMap", "name": "settings",
                                       "namespace": namespace, "uid": involved["metadata"]["uid"]}
    assert (event["reason"], event["message"], event["type"], event["count"]) == (
        "DriftCorrected", "re-applied .data.color", "Warning", 1)
    assert event["source"] == {"component": "kplan"}


def test_a_repeated_event_bumps_the_count_instead_of_adding_one(kube: Kube, namespace: str) -> None:
    involved = kube.create(configmap("settings", namespace))

    for _ in range(3):
        kube.event(involved, "Applied", "step app applied")

    [event] = events_about(kube, namespace, "settings")
    assert event["count"] == 3
    assert event["lastTimestamp"] >= event["firstTimestamp"]


def test_a_different_message_is_a_different_event(kube: Kube, namespace: str) -> None:
    involved = kube.create(configmap("settings", namespace))

    kube.event(involved, "Applied", "step app applied")
    kube.event(involved, "Applied", "step init applied")

    assert [(e["message"], e["count"]) for e in events_about(kube, namespace, "settings")] == [
        ("step app applied", 1), ("step init applied", 1)]


def test_events_about_cluster_scoped_objects_go_to_the_default_namespace(kube: Kube, namespace: str) -> None:
    involved = kube.get("v1", "Namespace", namespace)

    kube.event(involved, "Checked", f"namespace {namespace} checked")

    assert [e["count"] for e in events_about(kube, "default", namespace)] == [1]
