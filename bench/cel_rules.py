"""CEL in kplan: rule evaluations per second, health verdicts of CEL health rules per second, and the cost of CRD
validation rules on custom resource creates through the dev cluster over loopback HTTP; prints one JSON object.

Each phase is bounded by a count and a time budget, so the run ends by itself.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from _common import machine, rate

from engine import cel, health
from engine.devcluster.cluster import DevCluster
from engine.model import HealthExprs, HealthRule

EVALUATIONS = 20000
VERDICTS = 5000
CREATES = 500
PHASE_BUDGET = 20.0
RULE = ("self.replicas <= 10 && self.tags.all(t, t.lowerAscii() == t) && "
        "quantity(self.memory).isLessThan(quantity('4Gi'))")
VALUE = {"replicas": 3, "tags": ["a", "b", "c"], "memory": "512Mi"}
HEALTH = HealthRule(group="example.com", kind="Widget", exprs=HealthExprs(
    current="self.status.phase == 'Running' && self.status.readyReplicas == self.spec.replicas",
    failed="self.status.conditions.exists(c, c.type == 'Stalled' && c.status == 'True')"))
WIDGET = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "n"},
          "spec": {"replicas": 3}, "status": {"phase": "Running", "readyReplicas": 3, "conditions": []}}


def schema(with_rules: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "object", "properties": {
        # bounded, or the rules' estimated cost is refused
        "replicas": {"type": "integer"}, "memory": {"type": "string", "maxLength": 16},
        "tags": {"type": "array", "maxItems": 16, "items": {"type": "string", "maxLength": 63}}}}
    if with_rules:
        spec["x-kubernetes-validations"] = [{"rule": RULE}, {"rule": "self.replicas == oldSelf.replicas"}]
        spec["properties"]["replicas"]["x-kubernetes-validations"] = [{"rule": "self >= 0"}]
    return {"type": "object", "properties": {"spec": spec}}


def creates_per_second(cluster: DevCluster, with_rules: bool) -> float:
    group = f"b{uuid.uuid4().hex[:8]}.example.com"
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"gizmos.{group}"},
           "spec": {"group": group, "scope": "Namespaced", "names": {"plural": "gizmos", "kind": "Gizmo"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": schema(with_rules)}}]}}
    code, answer = cluster.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=crd)
    assert code == 201, answer
    path = f"/apis/{group}/v1/namespaces/bench/gizmos"

    def create(i: int) -> None:
        body = {"apiVersion": f"{group}/v1", "kind": "Gizmo", "metadata": {"name": f"g{i}"}, "spec": VALUE}
        code, answer = cluster.request("POST", path, body=body)
        assert code == 201, answer

    return rate(CREATES, create, PHASE_BUDGET)


def main() -> None:
    program = cel.compile_checked(RULE, {"self": None})
    figures: dict[str, Any] = {"benchmark": "cel_rules", **machine()}
    figures["rule_evaluations_per_s"] = rate(EVALUATIONS, lambda _i: program.evaluate({"self": VALUE}), PHASE_BUDGET)
    figures["health_verdicts_per_s"] = rate(VERDICTS, lambda _i: health.compute(WIDGET, [HEALTH]), PHASE_BUDGET)
    with DevCluster(port=0) as cluster:
        code, answer = cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": "bench"}})
        assert code == 201, answer
        figures["cr_creates_per_s_without_rules"] = creates_per_second(cluster, False)
        figures["cr_creates_per_s_with_rules"] = creates_per_second(cluster, True)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
