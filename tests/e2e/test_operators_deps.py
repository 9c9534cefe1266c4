"""The airflow package and its dependencies, with the manager running and the CLI used as a person would.

`kubectl kplan install operators/airflow` records the OperatorVersions of the packages its Operator tasks
name (mysql and redis, found beside it) and runs deploy: the mysql and redis child Instances, owned by the
airflow Instance, reach COMPLETE before the webserver and scheduler are applied (the order in which the
cluster committed the changes, and creation timestamps); `uninstall` removes the children and everything
they made. No secret parameter value shows in any command's output, in any Instance's status or in Events.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from cli_harness import Cli

from engine.controller import Manager
from engine.kube import Kube

if TYPE_CHECKING:
    from conftest import Change, Changes, Kplan

OPERATORS = Path(__file__).resolve().parents[2] / "operators"
INSTANCE = ("kplan.dev/v1alpha1", "Instance")
WAIT = ("--wait", "--timeout", "90s")
SECRETS = {
    "dbRootPassword": "R00t-pw-9d1e4c7a",
    "dbPassword": "Db-pw-5b8f2e61a0",
    "fernetKey": "ZmVybmV0LWtleS1mb3ItdGhlLWRlcHMtdGVzdC0wMDA=",
    "adminPassword": "Admin-pw-3c6a9f0b",
}
SECRET_TEXTS = (*SECRETS.values(), "ZmVybmV0LWtleS1mb3It")


@pytest.fixture
def cli(sim_kubeconfig: Path, sim_namespace: str, sim_kube: Kube) -> Cli:
    return Cli(sim_kubeconfig, sim_namespace)


def install_airflow(cli: Cli, name: str = "flow") -> str:
    given = [arg for key, value in SECRETS.items() for arg in ("-p", f"{key}={value}")]
    result = cli("install", str(OPERATORS / "airflow"), "--instance", name, *given, "-p", "workers=1", *WAIT)
    assert result.code == 0, result.text
    return result.out


def deploy_complete(name: str) -> Any:
    def match(change: Change) -> bool:
        plans = (change.obj.get("status") or {}).get("plans") or {}
        return change.kind == "Instance" and change.name == name and (plans.get("deploy") or {}).get("status") == (
            "COMPLETE")
    return match


def live(kplan: Kplan, name: str) -> dict[str, Any]:
    found = kplan.instance(name)
    assert found is not None, f"Instance {name} not found"
    return found


def created(kube: Kube, namespace: str, api_version: str, kind: str, name: str) -> str:
    found = kube.get(api_version, kind, name, namespace)
    assert found is not None, f"{kind} {name} not found"
    return str(found["metadata"]["creationTimestamp"])


def assert_no_secret(where: str, text: str) -> None:
    leaked = [s for s in SECRET_TEXTS if s in text]
    assert leaked == [], f"{where} shows secret values {leaked}"


def test_install_records_the_dependencies_and_deploys_them_before_airflow(
    cli: Cli, kplan: Kplan, manager: Manager, changes: Changes
) -> None:
    out = install_airflow(cli)

    assert {"operatorversion.kplan.dev/mysql-0.1.0 created", "operatorversion.kplan.dev/redis-0.1.0 created",
            "operatorversion.kplan.dev/airflow-0.1.0 created"} <= set(out.splitlines())
    parent = live(kplan, "flow")
    for child, version in (("flow-mysql", "mysql-0.1.0"), ("flow-redis", "redis-0.1.0")):
        found = live(kplan, child)
        assert found["spec"]["operatorVersion"] == {"name": version}
        owner = found["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"], owner["uid"]) == ("Instance", "flow", parent["metadata"]["uid"])
        assert found["status"]["plans"]["deploy"]["status"] == "COMPLETE"
    children_done = max(changes.first(deploy_complete("flow-mysql")), changes.first(deploy_complete("flow-redis")))
    migration = changes.first(lambda c: c.type == "ADDED" and c.kind == "Job" and c.name.startswith("flow-db-init-"))
    airflow = min(changes.added("Deployment", "flow-webserver"), changes.added("Deployment", "flow-scheduler"))
    assert changes.added("StatefulSet", "flow-mysql") < children_done < migration < airflow
    assert changes.added("StatefulSet", "flow-redis") < children_done
    assert kplan.plan("flow", "deploy")["status"] == "COMPLETE"
    webserver = created(kplan.kube, kplan.namespace, "apps/v1", "Deployment", "flow-webserver")
    for child in ("flow-mysql", "flow-redis"):
        assert created(kplan.kube, kplan.namespace, *INSTANCE, child) <= webserver


def test_uninstall_removes_the_children_and_what_they_made(
    cli: Cli, kplan: Kplan, manager: Manager, sim_namespace: str
) -> None:
    install_airflow(cli)
    kube = kplan.kube
    assert len(managed(kube, sim_namespace)) > 10

    result = cli("uninstall", "--instance", "flow", *WAIT)

    assert result.code == 0, result.text
    assert kube.list(*INSTANCE, sim_namespace) == []
    kplan.wait(lambda: not managed(kube, sim_namespace))  # Pods follow their owners through the garbage collector
    claims = {c["metadata"]["name"] for c in kube.list("v1", "PersistentVolumeClaim", sim_namespace)}
    assert {"data-flow-mysql-0", "data-flow-redis-0"} <= claims  # the data outlives the Instances


def managed(kube: Kube, namespace: str) -> list[str]:
    """`Kind/name` of every object kplan applied (or a controller made from one) still in the namespace."""
    kinds = (INSTANCE, ("apps/v1", "StatefulSet"), ("apps/v1", "Deployment"), ("batch/v1", "Job"), ("v1", "Pod"),
             ("v1", "Service"), ("v1", "Secret"), ("v1", "ConfigMap"), ("policy/v1", "PodDisruptionBudget"))
    return [f"{kind}/{o['metadata']['name']}" for api, kind in kinds for o in kube.list(api, kind, namespace)
            if kind == "Pod" or (o["metadata"].get("labels") or {}).get("app.kubernetes.io/managed-by") == "kplan"]


def test_no_secret_shows_in_output_status_or_events(
    cli: Cli, kplan: Kplan, manager: Manager, sim_namespace: str
) -> None:
    install_airflow(cli)
    for name in ("flow", "flow-mysql", "flow-redis"):
        assert cli("plan", "status", "--instance", name).code == 0
        assert cli("plan", "history", "--instance", name).code == 0
    for output in ("yaml", "json", "table"):
        assert cli("get", "instances", "-o", output).code == 0
    refused = cli("update", "--instance", "flow", "-p", "dbRootPassword=N3w-root-pw-77aa", *WAIT)
    assert refused.code == 1 and "immutable" in refused.err, refused.text
    changed = cli("update", "--instance", "flow", "-p", "dbPassword=Db-pw-rotated-1234", *WAIT)
    assert changed.code == 0, changed.text

    kube = kplan.kube
    statuses = {i["metadata"]["name"]: i.get("status") or {} for i in kube.list(*INSTANCE, sim_namespace)}
    events = [e for e in kube.list("v1", "Event", sim_namespace)]

    assert set(statuses) == {"flow", "flow-mysql", "flow-redis"}
    assert statuses["flow-mysql"]["lastRun"]["parameters"]["rootPassword"].startswith("sha256:")
    assert events, "the plans recorded no Events at all"
    for where, text in [*(("output", o) for o in cli.outputs),
                        *((f"status of {n}", json.dumps(s)) for n, s in statuses.items()),
                        ("events", json.dumps(events))]:
        assert_no_secret(where, text)
        assert "N3w-root-pw-77aa" not in text and "Db-pw-rotated-1234" not in text, where
