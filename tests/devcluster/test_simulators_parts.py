"""The simulators' pure parts: durations, steering annotations, placement, conditions, hashes, timers, work queue."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from engine.simulators import conditions, placement, steering
from engine.simulators.controllers.jobstatus import compress
from engine.simulators.controllers.workloads import SAFE_ALPHABET, omit_zero, template_hash
from engine.simulators.kubelet.podstatus import image_id, image_ref
from engine.simulators.timers import Timers
from engine.simulators.workqueue import Key, WorkQueue

WAIT = 10.0


@pytest.mark.parametrize(("text", "seconds"), [
    ("0s", 0.0), ("0", 0.0), ("2s", 2.0), ("500ms", 0.5), ("1m30s", 90.0), ("1.5h", 5400.0), ("250us", 0.00025),
])
def test_go_durations_are_read_in_seconds(text: str, seconds: float) -> None:
    assert steering.parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "2", "s", "2 s", "-1s", "1sx", "1d"])
def test_malformed_durations_are_rejected(text: str) -> None:
    assert steering.parse_duration(text) is None


def test_template_annotations_win_over_the_objects_own() -> None:
    obj = {"metadata": {"annotations": {steering.DURATION: "1s", steering.FAIL: "true", "other": "x"}},
           "spec": {"template": {"metadata": {"annotations": {steering.DURATION: "2s"}}}}}
    assert steering.of(obj) == {steering.DURATION: "2s", steering.FAIL: "true"}
    assert steering.duration_of(obj) == 2.0 and steering.fails(obj)
    assert steering.duration_of({"metadata": {"annotations": {steering.DURATION: "soon"}}}) == 0.0


def node(name: str, labels: dict[str, str] | None = None, *, ready: bool = True, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}}, "spec": spec,
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def test_node_selector_and_required_affinity_must_both_match() -> None:
    spec = {"nodeSelector": {"disk": "ssd"}, "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["special"]}]}]}}}}
    assert placement.affinity_matches(spec, node("n", {"disk": "ssd", "zone": "b"}))
    assert placement.affinity_matches(spec, node("special", {"disk": "ssd"}))
    assert not placement.affinity_matches(spec, node("n", {"disk": "ssd", "zone": "c"}))
    assert not placement.affinity_matches(spec, node("n", {"zone": "a"}))


@pytest.mark.parametrize(("operator", "values", "value", "expected"), [
    ("NotIn", ["a"], None, True), ("NotIn", ["a"], "a", False), ("Exists", [], "", True),
    ("DoesNotExist", [], None, True), ("Gt", ["3"], "4", True), ("Lt", ["3"], "4", False), ("Gt", ["3"], "x", False),
])
def test_node_selector_operators(operator: str, values: list[str], value: str | None, expected: bool) -> None:
    assert placement.expression_matches({"operator": operator, "values": values}, value) is expected


def test_the_unschedulable_message_counts_nodes_by_reason_like_the_scheduler() -> None:
    spec = {"nodeSelector": {"pool": "x"}}
    nodes = [node("a"), node("b"), node("c", {"pool": "x"}, unschedulable=True),
             node("d", {"pool": "x"}, taints=[{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]),
             node("e", {"pool": "x"}, ready=False)]
    assert placement.unschedulable_message(spec, nodes) == (
        "0/5 nodes are available: 1 node(s) had untolerated taint {gpu: yes}, 1 node(s) had untolerated taint "
        "{node.kubernetes.io/not-ready: }, 1 node(s) were unschedulable, 2 node(s) didn't match Pod's node "
        "affinity/selector. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.")
    assert placement.unschedulable_message(spec, []) == "no nodes available to schedule pods"
    tolerant = {**spec, "tolerations": [{"key": "gpu", "operator": "Exists"}]}
    assert placement.name_of(placement.choose(tolerant, nodes, "p") or {}) == "d"


def test_a_condition_keeps_its_transition_time_unless_its_status_flips() -> None:
    first = conditions.put([], "Ready", False, "Starting", now="t1", stamps=("lastUpdateTime",))
    assert first == [{"type": "Ready", "status": "False", "lastUpdateTime": "t1", "lastTransitionTime": "t1",
                      "reason": "Starting"}]
    assert conditions.put(first, "Ready", False, "Starting", now="t2") == first
    reworded = conditions.put(first, "Ready", False, "Waiting", now="t2", stamps=("lastUpdateTime",))
    assert (reworded[0]["lastUpdateTime"], reworded[0]["lastTransitionTime"]) == ("t2", "t1")
    flipped = conditions.put(reworded, "Ready", True, now="t3")
    assert flipped[0]["lastTransitionTime"] == "t3" and "reason" not in flipped[0]


def test_template_hashes_are_stable_and_safe_encoded() -> None:
    one = template_hash({"spec": {"containers": [{"name": "a", "image": "x"}]}})
    assert one == template_hash({"spec": {"containers": [{"image": "x", "name": "a"}]}})
    assert one != template_hash({"spec": {"containers": [{"name": "a", "image": "y"}]}})
    assert set(one) <= set(SAFE_ALPHABET) and 8 <= len(one) <= 10


def test_zero_counts_are_omitted_unless_required() -> None:
    assert omit_zero({"replicas": 0, "ready": 0, "flag": False, "name": ""}, keep=("replicas",)) == {
        "replicas": 0, "flag": False, "name": ""}


def test_completed_indexes_are_written_as_ranges() -> None:
    assert compress([5, 0, 1, 2, 7, 8]) == "0-2,5,7-8"
    assert compress([]) == ""


def test_images_are_reported_fully_qualified() -> None:
    assert image_ref("nginx") == "docker.io/library/nginx:latest"
    assert image_ref("bitnami/redis:7") == "docker.io/bitnami/redis:7"
    assert image_ref("registry.example.com:5000/team/app:1.0") == "registry.example.com:5000/team/app:1.0"
    assert image_id("nginx:1.27").startswith("docker.io/library/nginx@sha256:")


def test_timers_fire_in_deadline_order_and_stop_drops_the_rest() -> None:
    timers = Timers()
    fired: list[str] = []
    done = threading.Event()
    timers.start()
    try:
        timers.schedule(0.3, lambda: (fired.append("late"), done.set()))
        timers.schedule(0.1, lambda: fired.append("soon"))
        timers.schedule(0.0, lambda: fired.append("now"))
        timers.schedule(3600, lambda: fired.append("never"))
        assert done.wait(WAIT)
        assert fired == ["now", "soon", "late"] and timers.pending() == 1
    finally:
        timers.stop()
    assert timers.pending() == 0
    timers.schedule(0, lambda: fired.append("after stop"))
    assert timers.pending() == 0


def test_the_work_queue_holds_a_key_once_and_requeues_one_added_while_processing() -> None:
    timers = Timers()
    queue = WorkQueue(timers)
    a, b = Key("c", "ns", "a"), Key("c", "ns", "b")
    queue.add(a)
    queue.add(b)
    queue.add(a)
    assert queue.get() == a
    queue.add(a)  # changed while being processed
    assert queue.get() == b
    queue.done(b)
    queue.done(a)
    assert queue.get() == a
    queue.done(a)
    assert queue.idle()
    queue.close()
    assert queue.get() is None
