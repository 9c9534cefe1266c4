"""KUDO-format packages installed as they are: `kubectl kplan install DIR` converts them in memory.

The fixture `shop` is shaped like KUDO's community packages (a Pipe task whose pod writes a file, string
booleans, a Toggle, `until`/range, an update plan triggered by its parameters, a selector on KUDO's
`kudo.dev/instance` label): it installs to COMPLETE with the piped file stored where `.Pipes.KEY` says, and
a parameter change runs the update plan, which switches the Toggle's objects on (and off again). The fixture `repo/demo`
is shaped like KUDO's flink demo: three KudoOperator tasks whose packages are found in `--kudo-repo`, two
of them given parameters by a parameterFile; the children install with those parameters.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from cli_harness import INSTANCE, Cli

from engine.controller import Manager
from engine.kube import Kube

if TYPE_CHECKING:
    from conftest import Kplan

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kudo"
WAIT = ("--wait", "--timeout", "90s")


@pytest.fixture
def cli(sim_kubeconfig: Path, sim_namespace: str, sim_kube: Kube) -> Cli:
    return Cli(sim_kubeconfig, sim_namespace)


def instance(kube: Kube, namespace: str, name: str) -> dict[str, Any]:
    found = kube.get(*INSTANCE, name, namespace)
    assert found is not None, f"Instance {name} not found"
    return found


def configmap(kube: Kube, namespace: str, name: str) -> dict[str, Any] | None:
    return kube.get("v1", "ConfigMap", name, namespace)


def test_a_kudo_package_installs_and_a_parameter_change_runs_its_update_plan(
    cli: Cli, sim_kube: Kube, sim_namespace: str, manager: Manager, kplan: Kplan
) -> None:
    result = cli.ok("install", str(FIXTURES / "shop"), "--instance", "store", "-p", "REPLICAS=2", *WAIT)

    assert "is a KUDO package, converted in memory" in result.err
    assert instance(sim_kube, sim_namespace, "store")["status"]["plans"]["deploy"]["status"] == "COMPLETE"
    config = configmap(sim_kube, sim_namespace, "store-config")
    assert config is not None and config["data"] == {
        "replicas": "2", "tls": "off", "members": "store-0,store-1", "zones": "0:b 1:a "}
    piped = configmap(sim_kube, sim_namespace, "store.tokenfile")  # the name `.Pipes.tokenFile` renders
    assert piped is not None and piped["data"] == {"token": "generated-token"}  # KUDO's key: the file's name
    app = sim_kube.get("apps/v1", "Deployment", "store-app", sim_namespace)
    assert app is not None
    assert app["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"] == "store.tokenfile"
    assert app["spec"]["template"]["metadata"]["labels"]["kudo.dev/instance"] == "store"  # as KUDO labelled
    assert app["metadata"]["labels"]["heritage"] == "kudo"
    assert configmap(sim_kube, sim_namespace, "store-extra") is None  # ENABLE_EXTRA is "false"

    cli.ok("update", "--instance", "store", "-p", "ENABLE_EXTRA=true", *WAIT)

    plans = instance(sim_kube, sim_namespace, "store")["status"]["plans"]
    assert plans["update"]["status"] == "COMPLETE"
    extra = configmap(sim_kube, sim_namespace, "store-extra")
    assert extra is not None and extra["data"] == {"note": "shop 1.2.3"}

    cli.ok("update", "--instance", "store", "-p", "ENABLE_EXTRA=false", *WAIT)

    # switched off, the Toggle's objects are pruned as the update plan completes
    kplan.wait(lambda: configmap(sim_kube, sim_namespace, "store-extra") is None)


def test_kudo_operator_children_install_from_the_kudo_repository(
    cli: Cli, sim_kube: Kube, sim_namespace: str, manager: Manager
) -> None:
    result = cli.ok("install", str(FIXTURES / "repo" / "demo"), "--instance", "fraud",
                    "--kudo-repo", str(FIXTURES / "repo"), *WAIT)

    assert "asks for beta 0.9.0" not in result.out
    assert instance(sim_kube, sim_namespace, "fraud")["status"]["plans"]["deploy"]["status"] == "COMPLETE"
    children = {"first": ("alpha", "hi from the demo", "2"), "fraud-beta": ("beta", "fraud says hello", "3"),
                "fraud-gamma": ("gamma", "hello", "1")}
    for name, (package, greeting, size) in children.items():
        child = instance(sim_kube, sim_namespace, name)
        assert child["spec"]["operatorVersion"]["name"] == f"{package}-1.0.0"
        assert child["status"]["plans"]["deploy"]["status"] == "COMPLETE"
        config = configmap(sim_kube, sim_namespace, f"{name}-config")
        assert config is not None and config["data"] == {"greeting": f"{greeting} from {package}", "size": size}
