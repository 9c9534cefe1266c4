"""One Instance never takes over another's objects, through `kubectl kplan` with a manager running.

A package that renders an object of the same name as an object of another Instance is refused: the step is
FATAL_ERROR naming the object and the Instance it belongs to, and the object, its owner and its uninstall are
untouched. A task with `force: true` adopts it instead (the other Instance no longer heals or deletes it).
Each Instance applies with its own field manager; objects applied by the one manager `kplan` of earlier
versions pass to the Instance they are labelled with on its next apply.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_harness import INSTANCE, Cli, Result, package

from engine.controller import Manager
from engine.kube import Kube

WAIT = ("--wait", "--timeout", "60s")
SERVICE = ("v1", "Service")


@pytest.fixture
def cli(sim_kubeconfig: Path, sim_namespace: str, sim_kube: Kube) -> Cli:
    return Cli(sim_kubeconfig, sim_namespace)


def service(kube: Kube, cli: Cli, name: str = "r-headless") -> dict[str, Any]:
    found = kube.get(*SERVICE, name, cli.namespace)
    assert found is not None, f"Service {name} is gone"
    return found


def shape(svc: dict[str, Any]) -> dict[str, Any]:
    """What a takeover would change: ports, selector, labels and owners."""
    meta = svc["metadata"]
    return {"ports": svc["spec"]["ports"], "selector": svc["spec"]["selector"], "labels": meta["labels"],
            "owners": [(o["kind"], o["name"]) for o in meta.get("ownerReferences") or []]}


def appliers(svc: dict[str, Any]) -> set[str]:
    return {m["manager"] for m in svc["metadata"].get("managedFields") or [] if m["operation"] == "Apply"}


def plan_message(kube: Kube, cli: Cli, name: str) -> str:
    instance = kube.get(*INSTANCE, name, cli.namespace)
    assert instance is not None
    [step] = instance["status"]["plans"]["deploy"]["phases"][0]["steps"]
    assert step["status"] == "FATAL_ERROR", step
    return str(step["message"])


def install(cli: Cli, pkg: str, name: str, *args: str) -> Result:
    return cli("install", package(pkg), "--instance", name, *args, *WAIT)


def test_an_object_of_another_instance_is_refused_and_stays_as_it_was(
    cli: Cli, sim_kube: Kube, manager: Manager
) -> None:
    assert install(cli, "claim-headless", "r").code == 0
    before = shape(service(sim_kube, cli))

    result = install(cli, "claim-taker", "r-headless")

    assert result.code == 1, result.text
    message = plan_message(sim_kube, cli, "r-headless")
    ns = cli.namespace
    assert message.startswith(f"Service {ns}/r-headless belongs to Instance {ns}/r: ")
    assert "set `force: true` on task service to adopt it" in message
    assert message in result.text  # the CLI shows why
    assert shape(service(sim_kube, cli)) == before
    assert appliers(service(sim_kube, cli)) == {f"kplan/{ns}/r"}

    cli.ok("uninstall", "--instance", "r-headless", *WAIT)
    assert shape(service(sim_kube, cli)) == before  # uninstalling the refused Instance leaves r's object
    cli.ok("uninstall", "--instance", "r", *WAIT)
    assert sim_kube.get(*SERVICE, "r-headless", ns) is None


def test_a_task_with_force_adopts_the_object_and_its_old_instance_lets_it_go(
    cli: Cli, sim_kube: Kube, manager: Manager
) -> None:
    assert install(cli, "claim-headless", "r").code == 0

    result = install(cli, "claim-adopter", "r-headless")

    assert result.code == 0, result.text
    adopted = service(sim_kube, cli)
    ns = cli.namespace
    assert shape(adopted) == {
        "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 80}], "selector": {"app": "web"},
        "labels": {"app.kubernetes.io/managed-by": "kplan", "kplan.dev/instance": "r-headless",
                   "kplan.dev/operator": "claim-adopter"},
        "owners": [("Instance", "r-headless")],
    }
    assert appliers(adopted) == {f"kplan/{ns}/r-headless"}

    result = cli("update", "--instance", "r", "-p", "port=6380", *WAIT)  # r runs again: refused, not fighting back
    assert result.code == 1, result.text
    assert plan_message(sim_kube, cli, "r").startswith(f"Service {ns}/r-headless belongs to Instance {ns}/r-headless")
    cli.ok("uninstall", "--instance", "r", *WAIT)
    assert shape(service(sim_kube, cli)) == shape(adopted)


def test_objects_applied_by_the_legacy_manager_pass_to_their_instance(
    cli: Cli, sim_kube: Kube, manager: Manager, tmp_path: Path
) -> None:
    rendered = tmp_path / "r.yaml"
    rendered.write_text(cli.ok("template", package("claim-headless"), "--instance", "r").out)
    cli.kubectl("apply", "--server-side", "--field-manager", "kplan", "-f", str(rendered))  # as kplan 0.1 did
    assert appliers(service(sim_kube, cli)) == {"kplan"}

    result = install(cli, "claim-headless", "r", "-p", "port=6380")  # a field the legacy manager owns changes

    assert result.code == 0, result.text
    svc = service(sim_kube, cli)
    assert svc["spec"]["ports"][0]["port"] == 6380
    assert appliers(svc) == {f"kplan/{cli.namespace}/r"}
