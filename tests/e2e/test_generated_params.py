"""Generated secret parameters, with `kplan manager` processes and the real `kubectl kplan`.

`kubectl kplan install ./operators/airflow --instance af --wait` with no parameters completes: the manager
generates the passwords and the Fernet key once, keeps them in the Secret `af-kplan-generated` owned by the
Instance, and renders with them. An update, a manager restart and an upgrade leave them as they were; no
command's output, no Instance's status, no Event and no manager log shows any of them; `get secret-params`
says where they are.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from cli_harness import INSTANCE, Cli

from engine.kube import Kube

if TYPE_CHECKING:
    from conftest import ManagerProcess

OPERATORS = Path(__file__).resolve().parents[2] / "operators"
WAIT = ("--wait", "--timeout", "120s")
GENERATED = {"adminPassword", "dbPassword", "dbRootPassword", "fernetKey"}


@pytest.fixture
def cli(sim_kubeconfig: Path, sim_namespace: str, sim_kube: Kube) -> Cli:
    return Cli(sim_kubeconfig, sim_namespace)


def ok(cli: Cli, *args: str) -> str:
    result = cli(*args)
    assert result.code == 0, result.text
    return result.out


def generated_secret(kube: Kube, namespace: str) -> dict[str, Any]:
    found = kube.get("v1", "Secret", "af-kplan-generated", namespace)
    assert found is not None, "the Secret of generated values is missing"
    return found


def values_of(secret: dict[str, Any]) -> dict[str, str]:
    return {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}


def newer_airflow(tmp_path: Path) -> Path:
    """operators/airflow at 0.2.0 (upgradable from 0.1.x), with mysql and redis beside it."""
    for name in ("airflow", "mysql", "redis"):
        shutil.copytree(OPERATORS / name, tmp_path / name)
    operator = tmp_path / "airflow" / "operator.yaml"
    operator.write_text(operator.read_text().replace("operatorVersion: 0.1.0",
                                                     'operatorVersion: 0.2.0\nupgradableFrom: ["0.1.x"]'))
    return tmp_path / "airflow"


def assert_nowhere(texts: list[str], where: str, text: str) -> None:
    leaked = [name for name, value in zip(sorted(GENERATED), texts, strict=True) if value in text]
    assert leaked == [], f"{where} shows the generated values of {leaked}"


def test_airflow_installs_with_no_parameters_and_its_generated_values_stay(
    cli: Cli, sim_kube: Kube, manager_process: Callable[..., ManagerProcess], tmp_path: Path
) -> None:
    first = manager_process("first")

    out = ok(cli, "install", str(OPERATORS / "airflow"), "--instance", "af", *WAIT)

    assert "plan deploy: COMPLETE" in out
    secret = generated_secret(sim_kube, cli.namespace)
    owner = secret["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("Instance", "af", True)
    values = values_of(secret)
    assert set(values) == GENERATED
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}=", values["fernetKey"])
    assert len(values["dbRootPassword"]) == 24 and values["dbRootPassword"].isalnum()
    child = sim_kube.get(*INSTANCE, "af-mysql", cli.namespace)
    assert child is not None and child["spec"]["parameters"]["rootPassword"] == values["dbRootPassword"]
    airflow_config = sim_kube.get("v1", "Secret", "af-secrets", cli.namespace) or {}
    rendered = " ".join(base64.b64decode(v).decode() for v in (airflow_config.get("data") or {}).values())
    assert values["fernetKey"] in rendered

    ok(cli, "update", "--instance", "af", "-p", "workers=1", *WAIT)
    assert generated_secret(sim_kube, cli.namespace)["metadata"]["resourceVersion"] == (
        secret["metadata"]["resourceVersion"])

    first.kill()
    second = manager_process("second")
    ok(cli, "update", "--instance", "af", "-p", "workers=3", *WAIT)
    ok(cli, "upgrade", "--instance", "af", str(newer_airflow(tmp_path)), *WAIT)

    after = generated_secret(sim_kube, cli.namespace)
    assert values_of(after) == values and after["metadata"]["resourceVersion"] == secret["metadata"]["resourceVersion"]
    instance = sim_kube.get(*INSTANCE, "af", cli.namespace)
    assert instance is not None and instance["spec"]["operatorVersion"]["name"] == "airflow-0.2.0"
    assert values["fernetKey"] in " ".join(
        base64.b64decode(v).decode()
        for v in ((sim_kube.get("v1", "Secret", "af-secrets", cli.namespace) or {}).get("data") or {}).values())

    where = ok(cli, "get", "secret-params", "--instance", "af")
    assert re.search(r"fernetKey\s+fernet\s+generated\s+secret/af-kplan-generated key fernetKey", where)

    texts = [values[name] for name in sorted(GENERATED)]
    for output in cli.outputs:
        assert_nowhere(texts, "a command", output)
    for name in ("af", "af-mysql", "af-redis"):
        found = sim_kube.get(*INSTANCE, name, cli.namespace) or {}
        assert_nowhere(texts, f"the status of {name}", json.dumps(found.get("status")))
    events = sim_kube.list("v1", "Event", cli.namespace)
    assert events
    assert_nowhere(texts, "an Event", json.dumps([e.get("message") for e in events]))
    second.stop()
    first.stop()
    for log in (tmp_path / "first.log", tmp_path / "second.log"):
        assert_nowhere(texts, log.name, log.read_text())
