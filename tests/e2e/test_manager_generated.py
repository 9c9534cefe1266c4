"""Generated parameters made by the engine itself, for an Instance created without the CLI (as `kubectl apply`
would): the manager makes each value once, keeps it in `<instance>-kplan-generated` owned by the Instance and
renders with it; a parameter change plans with the same values; a Secret of that name that belongs to no
Instance is never overwritten, and the refusal says why without any value."""

from __future__ import annotations

import base64
import json
import re
from typing import TYPE_CHECKING, Any

from engine.controller import Manager

if TYPE_CHECKING:
    from conftest import Kplan


def secret(kplan: Kplan, name: str) -> dict[str, Any] | None:
    return kplan.kube.get("v1", "Secret", name, kplan.namespace)


def decoded(obj: dict[str, Any] | None) -> dict[str, str]:
    return {k: base64.b64decode(v).decode() for k, v in ((obj or {}).get("data") or {}).items()}


def test_the_manager_generates_once_and_renders_with_the_values(kplan: Kplan, manager: Manager) -> None:
    kplan.install("generated", "g")
    kplan.wait_plan("g", "deploy")

    stored = secret(kplan, "g-kplan-generated")
    values = decoded(stored)
    assert re.fullmatch(r"[a-z0-9]{40}", values["token"])
    assert values["signingKey"].startswith("-----BEGIN PRIVATE KEY-----")
    assert decoded(secret(kplan, "g-app")) == {"token": values["token"], "signing-key": values["signingKey"]}

    kplan.set_parameters("g", colour="red")
    kplan.wait(lambda: ((kplan.kube.get("v1", "ConfigMap", "g-config", kplan.namespace) or {}).get("data") or {})
               .get("colour") == "red")
    kplan.wait_plan("g", "deploy")

    after = secret(kplan, "g-kplan-generated")
    assert after is not None and stored is not None
    assert after["metadata"]["resourceVersion"] == stored["metadata"]["resourceVersion"]
    assert decoded(secret(kplan, "g-app"))["token"] == values["token"]
    status = json.dumps(kplan.instance("g"))
    assert values["token"] not in status and values["signingKey"][40:80] not in status


def test_a_secret_of_that_name_that_is_not_the_instances_is_left_alone(kplan: Kplan, manager: Manager) -> None:
    kplan.kube.create({"apiVersion": "v1", "kind": "Secret",
                       "metadata": {"name": "h-kplan-generated", "namespace": kplan.namespace},
                       "data": {"token": base64.b64encode(b"someone-elses").decode()}})

    kplan.install("generated", "h")
    refusals = kplan.wait(lambda: kplan.events("h", "ActionFailed"))

    assert "Secret " + kplan.namespace + "/h-kplan-generated exists and does not belong to this Instance" in (
        refusals[0]["message"])
    assert decoded(secret(kplan, "h-kplan-generated")) == {"token": "someone-elses"}
    assert secret(kplan, "h-app") is None
