"""Generated parameters in the planner: it asks for missing values and plans nothing else, reads stored
values from the Instance's Secret as if given (only digests reach the status), ignores a Secret it does not
own, keeps a given value over a stored one, and never asks again once the values are there."""

from __future__ import annotations

import base64
import json

from planner_harness import NOW, UID, Cluster, Driver, apply_task, configmap, instance, package, phase, plan, step

from engine.model import Generated, GenerateKind, Parameter
from engine.planner import Apply, GenerateParameters, decide

PASSWORD = Parameter("password", secret=True, required=False, generate=Generated(GenerateKind.PASSWORD, 16))
PKG = package({"app.yaml": configmap("app", "{{ Params.password }}")},
              [apply_task("app", "app.yaml")],
              [plan("deploy", phase("main", step("app")))], [PASSWORD])
VALUE = "Stored-value-0123"


def stored(value: str = VALUE, uid: str = UID) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": "cache-kplan-generated", "namespace": "shop", "ownerReferences": [{"kind": "Instance", "uid": uid}]},
        "data": {"password": base64.b64encode(value.encode()).decode()}}


def test_a_missing_value_is_asked_for_and_nothing_else_is_planned() -> None:
    decision = decide(PKG, instance(), {}, NOW)

    (action,) = decision.actions
    assert isinstance(action, GenerateParameters)
    assert action.wanted == (("password", PASSWORD.generate),)
    meta = action.secret["metadata"]
    assert (meta["name"], meta["namespace"], meta["ownerReferences"][0]["uid"]) == ("cache-kplan-generated", "shop",
                                                                                    UID)
    assert decision.status == {} and decision.events == ()


def test_a_stored_value_is_used_as_given_and_only_its_digest_is_recorded() -> None:
    cluster = Cluster([stored()])
    driver = Driver(PKG, instance(), cluster)

    decision = driver.run()

    applied = [o for d in driver.decisions for a in d.actions if isinstance(a, Apply) for o in a.objects]
    assert applied and all(o["data"]["value"] == VALUE for o in applied)
    assert not any(isinstance(a, GenerateParameters) for d in driver.decisions for a in d.actions)
    assert VALUE not in json.dumps(decision.status) and driver.plan_status() == "COMPLETE"


def test_a_secret_the_instance_does_not_own_is_not_read() -> None:
    decision = decide(PKG, instance(), Cluster([stored(uid="someone-else")]).objects, NOW)

    assert [type(a) for a in decision.actions] == [GenerateParameters]


def test_a_given_value_wins_and_needs_no_generation() -> None:
    decision = decide(PKG, instance({"password": "Given-value-4567"}), {}, NOW)

    assert not any(isinstance(a, GenerateParameters) for a in decision.actions)
    applied = [o for a in decision.actions if isinstance(a, Apply) for o in a.objects]
    assert applied[0]["data"]["value"] == "Given-value-4567"
