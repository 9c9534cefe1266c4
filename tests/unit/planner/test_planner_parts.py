"""The planner's small parts and public surface: Ref, instance_ref, the status copy, drift matching, backoff and
timestamps."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import engine.planner as planner
from engine.planner import FINALIZER, Ref, instance_ref, view
from engine.planner.drift import first_difference
from engine.planner.times import backoff_delay, parse, requeue_after, stamp


def test_public_surface() -> None:
    assert set(planner.__all__) >= {"decide", "record_failures", "Decision", "Event", "Apply", "Delete",
                                    "ClearPlanExecution", "RemoveFinalizer", "AddFinalizer", "Failure", "Ref",
                                    "Settings", "PlanStatus", "FINALIZER", "instance_ref"}
    assert all(hasattr(planner, name) for name in planner.__all__)
    assert FINALIZER == "kplan.dev/cleanup"
    assert [s.value for s in planner.PlanStatus] == [
        "NEVER_RUN", "PENDING", "IN_PROGRESS", "COMPLETE", "ERROR", "FATAL_ERROR"]


def test_ref_of_objects_and_instances() -> None:
    obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "extra"}}
    assert Ref.of(obj) == Ref("v1", "Namespace", None, "extra")
    assert str(Ref.of(obj)) == "Namespace extra"
    inst = {"apiVersion": "kplan.dev/v1alpha1", "kind": "Instance", "metadata": {"name": "c", "namespace": "shop"}}
    assert instance_ref(inst) == Ref("kplan.dev/v1alpha1", "Instance", "shop", "c")
    assert Ref.of_entry(Ref.of(obj).entry("deploy")) == Ref.of(obj)


def test_the_status_to_change_is_a_deep_copy_of_plain_data() -> None:
    recorded = {"plans": {"deploy": {"phases": [{"steps": [{"name": "a", "attempts": 2**70}]}]}},
                "appliedResources": [{"name": "a"}], "observedGeneration": 3}
    for given in (recorded, {**recorded, "plans": {"deploy": {"phases": [{"steps": [{"name": "a"}]}]}}}):
        copied = view.status({"status": given})
        assert copied == given
        copied["plans"]["deploy"]["phases"][0]["steps"][0]["name"] = "changed"
        copied["appliedResources"].append({"name": "b"})
        assert given["plans"]["deploy"]["phases"][0]["steps"][0]["name"] == "a"
        assert given["appliedResources"] == [{"name": "a"}]


def test_refs_are_values() -> None:
    one, other = Ref("v1", "ConfigMap", "shop", "a"), Ref.of_entry(Ref("v1", "ConfigMap", "shop", "a").entry("deploy"))
    assert one == other and hash(one) == hash(other) and {one: 1}[other] == 1
    assert Ref("v1", "ConfigMap", None, "a") != Ref("v1", "ConfigMap", "", "a")
    assert Ref.of({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": 7, "namespace": ""}}) == Ref(
        "v1", "ConfigMap", None, "7")


@pytest.mark.parametrize(
    ("rendered", "live", "where"),
    [
        ({"data": {"a": "1"}}, {"data": {"a": "1", "b": "2"}}, None),
        ({"data": {"a": "1"}}, {"data": {"a": "2"}}, "data.a"),
        ({"spec": {"replicas": 3}}, {"spec": {"replicas": "3"}}, None),
        ({"spec": {"ports": [{"port": 80}]}}, {"spec": {"ports": [{"port": 80, "protocol": "TCP"}]}}, None),
        ({"spec": {"ports": [{"port": 80}]}}, {"spec": {"ports": [{"port": 80}, {"port": 81}]}}, "spec.ports"),
        ({"spec": {"ports": [{"port": 80}]}}, {"spec": {"ports": [{"port": 81}]}}, "spec.ports[0].port"),
        ({"spec": {"paused": False, "extra": {}}}, {"spec": {}}, None),
        ({"spec": {"paused": True}}, {"spec": {}}, "spec.paused"),
        ({"status": {"phase": "x"}}, {}, None),
        ({"cpu": 0.5, "memory": "1024Mi", "n": 1.0}, {"cpu": "500m", "memory": "1Gi", "n": "1"}, None),
        ({"cpu": "1"}, {"cpu": "2"}, "cpu"),
        ({"cpu": "1.5m", "memory": "0.5Gi", "n": 1000}, {"cpu": "2m", "memory": "512Mi", "n": "1k"}, None),
        ({"cpu": "1.5m"}, {"cpu": "3m"}, "cpu"),
        ({"image": "redis:7"}, {"image": "redis:8"}, "image"),
        ({"kind": "Secret", "stringData": {"k": "v"}}, {"kind": "Secret", "data": {"k": "dg=="}}, None),
        ({"metadata": {"annotations": {"kplan.dev/step": "b"}}}, {"metadata": {"annotations": {
            "kplan.dev/step": "a"}}}, None),
    ],
)
def test_first_difference_is_a_subset_match(rendered: dict[str, object], live: dict[str, object],
                                            where: str | None) -> None:
    assert first_difference(rendered, live) == where


def test_backoff_doubles_up_to_its_limit() -> None:
    assert [backoff_delay(n, 1.0, 60.0) for n in (1, 2, 3, 7, 8, 100)] == [1.0, 2.0, 4.0, 60.0, 60.0, 60.0]


def test_timestamps_round_trip_in_utc_seconds() -> None:
    moment = datetime(2024, 5, 1, 12, 0, 0, 999, tzinfo=UTC)
    assert stamp(moment) == "2024-05-01T12:00:00Z"
    assert parse("2024-05-01T12:00:00Z") == moment.replace(microsecond=0)
    assert parse("not a time") is None


def test_requeue_after_takes_the_earliest_deadline_still_ahead() -> None:
    now = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
    later, sooner, past = (now.replace(minute=m) for m in (5, 1, 0))
    assert requeue_after([later, None, sooner, past.replace(hour=11)], now) == 60.0
    assert requeue_after([None], now) is None
