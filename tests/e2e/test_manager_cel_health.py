"""A package's health rule written as CEL expressions holds its step until the expression is true of the object,
and the dev cluster's CRD validation rule refuses a custom resource the rule forbids."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.controller import Manager
from engine.devcluster.backends import Cluster

if TYPE_CHECKING:
    from conftest import Kplan

CURRENT = "self.status.phase == 'Ready' && self.status.observedSize == self.spec.size"


def gadget_step(kplan: Kplan, *statuses: str, message: str = "") -> dict[str, Any]:
    """The gadget step once its status is one of `statuses` and its message starts with `message`."""
    return kplan.wait(lambda: (step := kplan.steps("gear", "deploy").get("gadget") or {}).get("status") in statuses
                      and str(step.get("message", "")).startswith(message) and step)


def test_a_cel_health_rule_holds_the_step_and_a_crd_rule_refuses_a_bad_object(kplan: Kplan, manager: Manager,
                                                                              simcluster: Cluster) -> None:
    kplan.install("cel-health", "gear")
    waiting = f"Gadget {kplan.namespace}/gear-gadget: waiting for {CURRENT}"
    assert gadget_step(kplan, "IN_PROGRESS", message="Gadget")["message"] == waiting

    code, body = simcluster.request(
        "PATCH", f"/apis/celhealth.example.com/v1/namespaces/{kplan.namespace}/gadgets/gear-gadget/status",
        body={"status": {"phase": "Ready", "observedSize": 3}}, content_type="application/merge-patch+json")
    assert code == 200, body
    kplan.wait_plan("gear", "deploy")
    assert kplan.steps("gear", "deploy")["gadget"]["status"] == "COMPLETE"

    kplan.set_parameters("gear", size=11)
    refused = gadget_step(kplan, "ERROR", message="cannot apply")
    assert refused["message"] == (f"cannot apply Gadget {kplan.namespace}/gear-gadget: Gadget.celhealth.example.com "
                                  '"gear-gadget" is invalid: spec.size: Invalid value: 11: size must be at most 10')
