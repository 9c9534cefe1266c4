"""Built-in health of each kind, from YAML fixtures of what controllers write (fixtures/health/<kind>/<state>.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from engine import health
from engine.health import Health, Status

FIXTURES = Path(__file__).parent / "fixtures" / "health"
CASES = sorted(FIXTURES.glob("*/*.yaml"))


def load(path: Path) -> dict[str, Any]:
    case = yaml.safe_load(path.read_text())
    assert isinstance(case, dict) and set(case) == {"expect", "object"}, f"{path}: needs exactly expect and object"
    return case


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_fixture(path: Path) -> None:
    case = load(path)
    status = health.compute(case["object"])
    assert status.health == Health(case["expect"]["health"])
    assert case["expect"]["message"] in status.message
    assert status.message.startswith(health.describe(case["object"]))
    assert "\n" not in status.message


def test_every_kind_has_fixtures_for_each_outcome_it_can_reach() -> None:
    outcomes: dict[str, set[str]] = {}
    for path in CASES:
        outcomes.setdefault(path.parent.name, set()).add(load(path)["expect"]["health"])
    never_fail = {"daemonset", "replicaset", "statefulset", "service", "namespace", "configmap"}
    for kind, seen in outcomes.items():
        expected = {"Healthy", "Progressing"} | (set() if kind in never_fail else {"Failed"})
        assert seen == expected, kind


def test_workloads_have_stale_generation_fixtures() -> None:
    for kind in ("deployment", "statefulset", "daemonset", "replicaset", "customresource"):
        assert (FIXTURES / kind / "stale.yaml").exists(), kind


def test_missing_object_is_progressing_and_named_by_ref() -> None:
    missing = Status(Health.PROGRESSING, "Job shop/cache-init not found")
    assert health.compute(None, ref="Job shop/cache-init") == missing
    assert health.compute(None).message == "object not found"


@pytest.mark.parametrize(
    ("obj", "text"),
    [
        ({"kind": "Job", "metadata": {"name": "x", "namespace": "shop"}}, "Job shop/x"),
        ({"kind": "Namespace", "metadata": {"name": "shop"}}, "Namespace shop"),
        ({"metadata": {}}, "Object ?"),
    ],
)
def test_describe(obj: dict[str, Any], text: str) -> None:
    assert health.describe(obj) == text


def test_condition_messages_are_folded_to_one_line() -> None:
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "status": {"conditions": [{"type": "Ready", "status": "False", "message": "first\nsecond\n  third"}]},
    }
    assert health.compute(obj).message == "Widget w: Ready=False: first second third"


def test_same_kind_in_another_group_gets_the_generic_rule() -> None:
    obj = {"apiVersion": "example.com/v1", "kind": "Deployment", "metadata": {"name": "d", "generation": 4}}
    assert health.compute(obj) == Status(Health.HEALTHY, "Deployment d: exists")


def test_malformed_status_fields_read_as_absent() -> None:
    obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "generation": 1},
        "spec": {"replicas": "3"},
        "status": {"observedGeneration": 1, "replicas": True, "updatedReplicas": 1, "conditions": "broken"},
    }
    assert health.compute(obj) == Status(Health.PROGRESSING, "Deployment shop/web: 0/1 replicas available")


def test_public_surface() -> None:
    assert sorted(health.__all__) == ["Health", "Status", "compute", "describe", "path_error"]
