"""Package health rules (operator.yaml `health:`): conditions, jsonPaths, precedence over built-ins, invalid rules."""

from __future__ import annotations

from typing import Any

import pytest

from engine import health
from engine.health import Health, Status
from engine.model import Expectation, HealthRule

RABBIT = HealthRule(
    group="rabbitmq.com",
    kind="RabbitmqCluster",
    healthy=Expectation(condition="AllReplicasReady"),
    failed=Expectation(condition="ReconcileSuccess", status="False"),
)
RUNNING = Expectation(json_path=".status.phase", equals="Running")
WIDGET = HealthRule(group="example.com", kind="Widget", healthy=RUNNING)


SYNCED = {"type": "Synced", "status": "True"}


def rabbit(*conditions: dict[str, Any], generation: int = 1, **status: Any) -> dict[str, Any]:
    return {
        "apiVersion": "rabbitmq.com/v1beta1",
        "kind": "RabbitmqCluster",
        "metadata": {"name": "mq", "namespace": "shop", "generation": generation},
        "status": {"conditions": list(conditions), **status},
    }


def widget(status: dict[str, Any] | None = None, api_version: str = "example.com/v1") -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": "Widget", "metadata": {"name": "w", "namespace": "shop"}}
    if status is not None:
        obj["status"] = status
    return obj


def test_condition_rule_met_is_healthy() -> None:
    obj = rabbit({"type": "AllReplicasReady", "status": "True"}, {"type": "ReconcileSuccess", "status": "True"})
    assert health.compute(obj, [RABBIT]) == Status(Health.HEALTHY, "RabbitmqCluster shop/mq: AllReplicasReady=True")


def test_condition_rule_not_met_says_what_it_waits_for() -> None:
    obj = rabbit({"type": "AllReplicasReady", "status": "False", "reason": "NotAllReplicasReady", "message": "1/3"})
    assert health.compute(obj, [RABBIT]) == Status(
        Health.PROGRESSING,
        "RabbitmqCluster shop/mq: waiting for AllReplicasReady=True"
        " (now AllReplicasReady=False: NotAllReplicasReady: 1/3)",
    )


def test_condition_rule_absent_condition_is_progressing() -> None:
    status = health.compute(rabbit(), [RABBIT])
    assert status.health is Health.PROGRESSING
    assert status.message.endswith("(now no AllReplicasReady condition)")


def test_failed_expectation_wins_over_healthy() -> None:
    obj = rabbit(
        {"type": "AllReplicasReady", "status": "True"},
        {"type": "ReconcileSuccess", "status": "False", "reason": "Error", "message": "bad image"},
    )
    assert health.compute(obj, [RABBIT]) == Status(
        Health.FAILED, "RabbitmqCluster shop/mq failed: ReconcileSuccess=False: Error: bad image"
    )


def test_rule_beats_the_generic_ready_condition() -> None:
    obj = rabbit({"type": "Ready", "status": "True"})
    assert health.compute(obj).health is Health.HEALTHY
    assert health.compute(obj, [RABBIT]).health is Health.PROGRESSING


def test_rule_beats_a_built_in_kind() -> None:
    rule = HealthRule(group="apps", kind="Deployment", healthy=Expectation(json_path=".metadata.annotations.ok"))
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "generation": 1, "annotations": {"ok": "yes"}},
        "spec": {"replicas": 3},
        "status": {"observedGeneration": 1},
    }
    assert health.compute(obj).health is Health.PROGRESSING
    assert health.compute(obj, [rule]) == Status(Health.HEALTHY, "Deployment web: .metadata.annotations.ok set")


def test_core_group_matches_empty_or_core() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"ready": "yes"}}
    for group in ("", "core"):
        rule = HealthRule(group=group, kind="ConfigMap", healthy=Expectation(json_path=".data.ready", equals="no"))
        assert health.compute(obj, [rule]).health is Health.PROGRESSING


def test_rules_for_other_kinds_or_groups_are_ignored() -> None:
    other_group = HealthRule(group="other.com", kind="Widget", healthy=Expectation(condition="Ready"))
    other_kind = HealthRule(group="example.com", kind="Gadget", healthy=Expectation(condition="Ready"))
    assert health.compute(widget(), [other_group, other_kind]) == Status(Health.HEALTHY, "Widget shop/w: exists")


def test_group_matches_any_version() -> None:
    assert health.compute(widget({"phase": "Running"}, "example.com/v2beta1"), [WIDGET]).health is Health.HEALTHY


def test_kind_with_a_rule_is_never_healthy_by_default() -> None:
    status = health.compute(widget(), [WIDGET])
    assert status == Status(
        Health.PROGRESSING, "Widget shop/w: waiting for .status.phase = Running (now .status.phase unset)"
    )


def test_json_path_rule_progressing_then_healthy() -> None:
    assert health.compute(widget({"phase": "Pending"}), [WIDGET]).message.endswith("(now .status.phase = Pending)")
    assert health.compute(widget({"phase": "Running"}), [WIDGET]) == Status(
        Health.HEALTHY, "Widget shop/w: .status.phase = Running"
    )


def test_json_path_failed_expectation() -> None:
    rule = HealthRule(
        group="example.com",
        kind="Widget",
        healthy=Expectation(json_path=".status.phase", equals="Running"),
        failed=Expectation(json_path=".status.phase", equals="Error"),
    )
    assert health.compute(widget({"phase": "Error"}), [rule]) == Status(
        Health.FAILED, "Widget shop/w failed: .status.phase = Error"
    )


def test_rule_with_only_a_failed_expectation_leaves_health_to_the_built_in() -> None:
    rule = HealthRule(group="example.com", kind="Widget", failed=Expectation(condition="Degraded"))
    ready = {"conditions": [{"type": "Ready", "status": "False", "message": "warming up"}]}
    assert health.compute(widget(ready), [rule]).message == "Widget shop/w: Ready=False: warming up"
    degraded = {"conditions": [{"type": "Degraded", "status": "True", "message": "disk full"}]}
    assert health.compute(widget(degraded), [rule]).health is Health.FAILED


def test_every_matching_rule_must_be_met() -> None:
    second = HealthRule(group="example.com", kind="Widget", healthy=Expectation(json_path=".status.ready", equals=3))
    assert health.compute(widget({"phase": "Running", "ready": 2}), [WIDGET, second]).health is Health.PROGRESSING
    assert health.compute(widget({"phase": "Running", "ready": 3}), [WIDGET, second]).health is Health.HEALTHY


def test_stale_observed_generation_overrides_a_met_rule() -> None:
    obj = rabbit({"type": "AllReplicasReady", "status": "True"}, generation=2, observedGeneration=1)
    assert health.compute(obj, [RABBIT]).message.endswith("observe generation 2 (observed 1)")


def test_stale_condition_is_not_a_match() -> None:
    obj = rabbit({"type": "AllReplicasReady", "status": "True", "observedGeneration": 1}, generation=2)
    assert health.compute(obj, [RABBIT]).message.endswith("(now AllReplicasReady=True from generation 1)")


def test_rule_on_a_deleting_object_is_progressing() -> None:
    obj = widget({"phase": "Running"})
    obj["metadata"]["deletionTimestamp"] = "2025-01-02T03:04:05Z"
    assert health.compute(obj, [WIDGET]) == Status(Health.PROGRESSING, "Widget shop/w: being deleted")


@pytest.mark.parametrize(
    ("path", "equals", "status"),
    [
        ('.status.conditions[?(@.type=="Synced")].status', "True", {"conditions": [SYNCED]}),
        (".status.conditions[?(@.type=='Synced')].status", "True", {"conditions": [SYNCED]}),
        ('.status.conditions[?( @.type == "Synced" )].status', "True", {"conditions": [{"type": "A"}, SYNCED]}),
        (".status.nodes[1].state", "up", {"nodes": [{"state": "down"}, {"state": "up"}]}),
        (".status.nodes[-1].state", "up", {"nodes": [{"state": "down"}, {"state": "up"}]}),
        ("{.status.phase}", "Running", {"phase": "Running"}),
        ("$.status.phase", "Running", {"phase": "Running"}),
        ("status.phase", "Running", {"phase": "Running"}),
        (".status['ready.replicas']", 3, {"ready.replicas": 3}),
        (r".status.ready\.replicas", 3, {"ready.replicas": 3}),
        (".status.replicas", "3", {"replicas": 3}),
        (".status.replicas", 3.0, {"replicas": 3}),
        (".status.healthy", True, {"healthy": True}),
        (".status.healthy", "true", {"healthy": True}),
        (".status.members[?(@.role==1)].name", "b", {"members": [{"role": 0, "name": "a"}, {"role": 1, "name": "b"}]}),
        (".status.members[?(@.meta.role=='x')].name", "b", {"members": [{}, {"meta": {"role": "x"}, "name": "b"}]}),
        (".status.endpoints", ["a", "b"], {"endpoints": ["a", "b"]}),
    ],
)
def test_json_paths_that_match(path: str, equals: Any, status: dict[str, Any]) -> None:
    rule = HealthRule(group="example.com", kind="Widget", healthy=Expectation(json_path=path, equals=equals))
    assert health.compute(widget(status), [rule]).health is Health.HEALTHY
    assert health.path_error(path) is None


@pytest.mark.parametrize(
    ("path", "equals", "status"),
    [
        ('.status.conditions[?(@.type=="Synced")].status', "True", {"conditions": [{"type": "Other", "x": "True"}]}),
        (".status.nodes[2].state", "up", {"nodes": [{"state": "down"}, {"state": "up"}]}),
        (".status.nodes.state", "up", {"nodes": [{"state": "up"}]}),
        (".status.phase.inner", "Running", {"phase": "Running"}),
        (".status.replicas", True, {"replicas": 1}),
        (".status.healthy", 1, {"healthy": True}),
        (".status.healthy", None, {"healthy": False}),
        (".status.count", None, {"count": 0}),
    ],
)
def test_json_paths_that_do_not_match(path: str, equals: Any, status: dict[str, Any]) -> None:
    rule = HealthRule(group="example.com", kind="Widget", healthy=Expectation(json_path=path, equals=equals))
    assert health.compute(widget(status), [rule]).health is Health.PROGRESSING


@pytest.mark.parametrize("path", ["$", "{}", " ", ".status..phase", ".status[abc]", ".status[?(@.type~'x')]"])
def test_invalid_json_paths_are_reported(path: str) -> None:
    assert health.path_error(path)
    rule = HealthRule(group="example.com", kind="Widget", healthy=Expectation(json_path=path, equals="x"))
    status = health.compute(widget({"phase": "x"}), [rule])
    assert status.health is Health.FAILED
    assert status.message.startswith("Widget shop/w failed: health rule for Widget is invalid: jsonPath")


def test_expectation_without_condition_or_path_is_invalid() -> None:
    rule = HealthRule(group="example.com", kind="Widget", healthy=Expectation())
    reason = "an expectation needs a condition or a jsonPath"
    assert health.compute(widget(), [rule]) == Status(
        Health.FAILED, f"Widget shop/w failed: health rule for Widget is invalid: {reason}"
    )
    assert health.path_error("") == "jsonPath '' is empty"
