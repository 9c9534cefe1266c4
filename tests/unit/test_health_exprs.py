"""Package health rules written as CEL expressions (current, inProgress, failed, as Flux's healthCheckExprs): their
verdicts, missing fields, broken rules, and what `package verify` says about them (syntax, variables, the fields
of a CRD the package ships, the result type, the rule's form)."""

from __future__ import annotations

from typing import Any

import pytest

from engine import health
from engine.health import Health, Status
from engine.model import HealthExprs, HealthRule
from engine.package import verify

EXPRS = HealthExprs(
    current="self.status.phase == 'Running' && self.status.replicas == self.spec.replicas",
    in_progress="self.status.phase == 'Upgrading'",
    failed="self.status.phase == 'Failed' || self.status.conditions.exists(c, c.type == 'Stalled')",
)
RULE = HealthRule(group="example.com", kind="Widget", exprs=EXPRS)


def widget(status: dict[str, Any] | None = None, generation: int = 1) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"replicas": 2},
                           "metadata": {"name": "w", "namespace": "shop", "generation": generation}}
    if status is not None:
        obj["status"] = status
    return obj


def test_current_true_is_healthy() -> None:
    obj = widget({"phase": "Running", "replicas": 2, "conditions": []})
    assert health.compute(obj, [RULE]) == Status(Health.HEALTHY, f"Widget shop/w: {EXPRS.current}")


def test_in_progress_is_tried_before_failed_and_current() -> None:
    obj = widget({"phase": "Upgrading", "replicas": 2, "conditions": []})
    assert health.compute(obj, [RULE]) == Status(
        Health.PROGRESSING, "Widget shop/w: in progress (self.status.phase == 'Upgrading')")


def test_failed_wins_over_current() -> None:
    obj = widget({"phase": "Running", "replicas": 2, "conditions": [{"type": "Stalled", "status": "True"}]})
    status = health.compute(obj, [RULE])
    assert status.health is Health.FAILED
    assert status.message == f"Widget shop/w failed: {EXPRS.failed}"


def test_none_true_waits_for_current() -> None:
    obj = widget({"phase": "Running", "replicas": 1, "conditions": []})
    assert health.compute(obj, [RULE]) == Status(Health.PROGRESSING,
                                                 f"Widget shop/w: waiting for {EXPRS.current}")


def test_a_missing_field_makes_an_expression_false_not_an_error() -> None:
    status = health.compute(widget(), [RULE])
    assert status.health is Health.PROGRESSING
    assert status.message.startswith("Widget shop/w: waiting for ")


def test_a_stale_observed_generation_is_progressing_first() -> None:
    obj = widget({"phase": "Running", "replicas": 2, "conditions": [], "observedGeneration": 1}, generation=2)
    status = health.compute(obj, [RULE])
    assert status.health is Health.PROGRESSING
    assert "observe generation 2" in status.message


def test_string_helpers_quantities_and_optionals_are_available() -> None:
    rule = HealthRule(group="example.com", kind="Widget", exprs=HealthExprs(
        current="self.status.phase.lowerAscii().startsWith('run') && quantity(self.status.size)"
                ".isGreaterThan(quantity('1Gi')) && self.?status.?extra.orValue('') == ''"))
    assert health.compute(widget({"phase": "RUNNING", "size": "2Gi"}), [rule]).health is Health.HEALTHY


def test_an_expression_that_fails_to_evaluate_fails_the_object_with_why() -> None:
    rule = HealthRule(group="example.com", kind="Widget", exprs=HealthExprs(current="self.status.phase > 3"))
    status = health.compute(widget({"phase": "Running"}), [rule])
    assert status == Status(Health.FAILED, "Widget shop/w failed: health rule for Widget is invalid: "
                                           "self.status.phase > 3: no such overload")


def test_an_expression_that_is_not_a_bool_fails_the_object() -> None:
    rule = HealthRule(group="example.com", kind="Widget", exprs=HealthExprs(current="self.status.phase"))
    status = health.compute(widget({"phase": "Running"}), [rule])
    assert status.health is Health.FAILED
    assert status.message.endswith("self.status.phase: must evaluate to a bool, got str")


def test_other_kinds_are_not_judged_by_the_rule() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "shop"}}
    assert health.compute(obj, [RULE]).health is Health.HEALTHY


# package verify ------------------------------------------------------------------------------------------------

OPERATOR = """apiVersion: kplan.dev/v1alpha1
name: tiny
operatorVersion: 0.1.0
tasks:
  - name: app
    kind: Apply
    spec:
      resources: [crd.yaml]
health:
{health}
plans:
  deploy:
    phases:
      - name: main
        steps:
          - name: app
            tasks: [app]
"""
CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, kind: Widget}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, properties: {replicas: {type: integer}}}
            status: {type: object, properties: {phase: {type: string}, replicas: {type: integer}}}
"""


def problems(health_yaml: str) -> list[str]:
    files = {"operator.yaml": OPERATOR.format(health=health_yaml), "templates/crd.yaml": CRD}
    _, found = verify.verify(files, "memory")
    return [str(p) for p in found]


def test_valid_expressions_pass_verification() -> None:
    assert problems("""  - group: example.com
    kind: Widget
    current: "self.status.phase == 'Running' && self.status.replicas == self.spec.replicas"
    inProgress: "has(self.status.phase) && self.status.phase.startsWith('Up')"
    failed: "self.status.phase == 'Failed'"
  - group: other.io
    kind: Gadget
    current: "self.status.anything.goes == true"
""") == []


def rule(kind: str, **fields: str) -> str:
    """One health rule in operator.yaml; Widget is the kind whose CRD the package ships."""
    group = "example.com" if kind == "Widget" else "other.io"
    return f"  - group: {group}\n    kind: {kind}\n" + "".join(f"    {k}: {v}\n" for k, v in fields.items())


CEL = "operator.yaml:12: health[0].current: is not a valid CEL expression:"


@pytest.mark.parametrize(("health_yaml", "expected"), [
    (rule("Widget", current='"self.status.phase == \'Running\' &&"'),
     f"{CEL} Syntax error: mismatched input '<EOF>' expecting {{'[', '{{', '(', '.', '-', '!', 'true', 'false', "
     "'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER} (line 1, column 34) (error)"),
    (rule("Widget", current='"self.status.phse == \'Running\'"'),
     f"{CEL} undefined field 'phse' (line 1, column 12) (error)"),
    (rule("Gadget", current='"ready == true"'),
     f"{CEL} undeclared reference to 'ready' (in container '') (line 1, column 1) (error)"),
    (rule("Widget", current='"self.status.replicas"'),
     "operator.yaml:12: health[0].current: must be a CEL expression that is true or false, but it gives int (error)"),
    (rule("Gadget", inProgress='"self.status.busy"'),
     "operator.yaml:10: health[0]: needs current: the CEL expression that is true when the object is healthy (error)"),
    (rule("Gadget", current='"self.status.ok"', failed="{condition: Failed}"),
     "operator.yaml:13: health[0].failed: must be a CEL expression in a rule with current or inProgress (error)"),
    (rule("Gadget", current='"self.status.ok"', healthy="{condition: Ready}"),
     "operator.yaml:13: health[0].healthy: goes with condition or jsonPath expectations; a rule of CEL expressions "
     "says current (error)"),
    (rule("Gadget", current="3"), "operator.yaml:12: health[0].current: must be a string (error)"),
])
def test_verify_reports_broken_expressions(health_yaml: str, expected: str) -> None:
    assert problems(health_yaml) == [expected]


def test_a_package_with_expressions_loads_into_the_model() -> None:
    files = {"operator.yaml": OPERATOR.format(health="""  - group: example.com
    kind: Widget
    current: "self.status.phase == 'Running'"
    failed: "self.status.phase == 'Failed'"
"""), "templates/crd.yaml": CRD}
    pkg, found = verify.verify(files, "memory")
    assert found == [] and pkg is not None
    assert pkg.health == (HealthRule(group="example.com", kind="Widget", exprs=HealthExprs(
        current="self.status.phase == 'Running'", failed="self.status.phase == 'Failed'")),)
    assert pkg.health[0].failed is None
