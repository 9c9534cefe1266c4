"""`kubectl kplan install`, `get instances` and `init`, through the real kubectl binary.

An install with --wait runs the deploy plan to COMPLETE and records Operator, OperatorVersion and Instance;
a package or a value that cannot work is refused with one sentence before anything is created; the package an
Operator task names is recorded beside its parent's; `get instances` shows kubectl's columns; `init` prints
or applies the CRDs, the manager's RBAC and its Deployment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_harness import INSTANCE, SECRET, Cli, package

from engine.controller import Manager
from engine.kube import Kube
from engine.package import loader

OPERATOR = ("kplan.dev/v1alpha1", "Operator")
OPERATOR_VERSION = ("kplan.dev/v1alpha1", "OperatorVersion")
WAIT = ("--wait", "--timeout", "60s")
PASSWORD = f"password={SECRET}"


@pytest.fixture
def cli(sim_kubeconfig: Path, sim_namespace: str, sim_kube: Kube) -> Cli:
    return Cli(sim_kubeconfig, sim_namespace)


def recorded(kube: Kube, namespace: str) -> list[str]:
    """Everything install could have created in the namespace, as `Kind/name`."""
    kinds = [OPERATOR, OPERATOR_VERSION, INSTANCE, ("v1", "ConfigMap"), ("v1", "Secret"), ("apps/v1", "Deployment")]
    return [f"{kind}/{obj['metadata']['name']}" for api, kind in kinds for obj in kube.list(api, kind, namespace)
            if kind not in ("ConfigMap", "Secret") or obj["metadata"].get("labels")]


def error_line(result: Any) -> str:
    assert result.code == 1, result.text
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    return str(lines[0])


def test_install_wait_runs_deploy_to_complete_and_records_the_package(
    cli: Cli, sim_kube: Kube, manager: Manager
) -> None:
    result = cli("install", package("cli-app"), "--instance", "shop", "-p", PASSWORD, "-p", "replicas=2", *WAIT)

    assert result.code == 0, result.text
    assert "plan deploy: COMPLETE" in result.out
    assert "Step app [COMPLETE]" in result.out
    ns = cli.namespace
    instance = sim_kube.get(*INSTANCE, "shop", ns)
    assert instance is not None
    assert instance["spec"] == {"operatorVersion": {"name": "cli-app-0.1.0"},
                                "parameters": {"password": SECRET, "replicas": 2}}
    assert instance["metadata"]["labels"]["kplan.dev/operator"] == "cli-app"
    assert instance["status"]["plans"]["deploy"]["status"] == "COMPLETE"
    version = sim_kube.get(*OPERATOR_VERSION, "cli-app-0.1.0", ns)
    assert version is not None and version["spec"]["files"] == loader.read_files(package("cli-app"))
    assert sim_kube.get(*OPERATOR, "cli-app", ns) is not None
    assert sim_kube.get("apps/v1", "Deployment", "shop", ns)["spec"]["replicas"] == 2  # type: ignore[index]
    assert sim_kube.get("v1", "ConfigMap", "shop-config", ns)["data"]["replicas"] == "2"  # type: ignore[index]


def test_install_wait_exits_1_with_the_failing_step_when_deploy_ends_fatal_error(
    cli: Cli, sim_kube: Kube, manager: Manager
) -> None:
    taken = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shop-config", "namespace": cli.namespace},
             "data": {"zone": "theirs"}}
    sim_kube.apply(taken, field_manager="someone-else")

    result = cli("install", package("cli-app"), "--instance", "shop", "-p", PASSWORD, *WAIT)

    line = error_line(result)
    assert "plan deploy of instance 'shop' ended FATAL_ERROR: step config:" in line
    assert '"someone-else" on .data.zone' in line
    assert "deploy/config/config: FATAL_ERROR" in result.out
    assert "Step config [FATAL_ERROR]" in result.out


def test_install_without_wait_prints_what_it_created(cli: Cli, sim_kube: Kube) -> None:
    result = cli("install", package("cli-app"), "-p", PASSWORD)

    assert result.code == 0, result.text
    assert result.out.splitlines() == [
        "operator.kplan.dev/cli-app created",
        "operatorversion.kplan.dev/cli-app-0.1.0 created",
        "instance.kplan.dev/cli-app created",
        "parameters: password=*****",
    ]
    again = cli("install", package("cli-app"), "-p", PASSWORD)
    assert "instance 'cli-app' already exists" in error_line(again)


@pytest.mark.parametrize(("args", "message"), [
    ((package("cli-broken-render"),), "backup.yaml:6: the target parameter must be set (plan backup)"),
    ((package("cli-broken-verify"),), "names the task 'missing', which is not in tasks"),
    ((package("cli-app"), "-p", PASSWORD, "-p", "replicas=9"), "parameter 'replicas' must be at most 5, got 9"),
    ((package("cli-app"), "-p", PASSWORD, "-p", "replicas=many"), "parameter 'replicas' must be an integer"),
    ((package("cli-app"),), "parameter 'password' is required and has no default"),
    ((package("cli-app"), "-p", PASSWORD, "-p", "colour=red"), "parameter 'colour' is not declared"),
    ((package("cli-app"), "-p", PASSWORD, "--instance", "Not_A_Name"), "instance name 'Not_A_Name' is not valid"),
    (("cli-app",), "no package repositories are configured"),
    (("cli-app@0.1.0",), "no package repositories are configured"),
], ids=["render", "verify", "bounds", "type", "required", "undeclared", "name", "bare-name", "name-at-version"])
def test_a_package_or_value_that_cannot_work_is_refused_and_nothing_is_created(
    cli: Cli, sim_kube: Kube, args: tuple[str, ...], message: str
) -> None:
    result = cli("install", *args)

    assert message in error_line(result)
    assert recorded(sim_kube, cli.namespace) == []


def test_a_secret_value_that_is_refused_is_not_printed(cli: Cli, sim_kube: Kube) -> None:
    result = cli("install", package("cli-app"), "-p", "password=Sesame")

    line = error_line(result)
    assert "parameter 'password' must have at least 8 characters" in line
    assert "Sesame" not in result.text
    assert recorded(sim_kube, cli.namespace) == []


def test_an_operatorversion_with_other_content_is_refused(cli: Cli, sim_kube: Kube) -> None:
    files = {**loader.read_files(package("cli-app")), "README.md": "another build of the same version\n"}
    sim_kube.create({"apiVersion": OPERATOR_VERSION[0], "kind": OPERATOR_VERSION[1],
                     "metadata": {"name": "cli-app-0.1.0", "namespace": cli.namespace},
                     "spec": {"operator": {"name": "cli-app"}, "version": "0.1.0", "files": files}})

    result = cli("install", package("cli-app"), "-p", PASSWORD)

    assert ("operatorversion cli-app-0.1.0 already exists with different content; bump operatorVersion"
            in error_line(result))
    assert sim_kube.list(*INSTANCE, cli.namespace) == []
    assert sim_kube.get(*OPERATOR, "cli-app", cli.namespace) is None


def test_a_second_instance_of_a_recorded_package_keeps_its_operatorversion(cli: Cli, sim_kube: Kube) -> None:
    assert cli("install", package("cli-app"), "-p", PASSWORD).code == 0
    recorded_version = sim_kube.get(*OPERATOR_VERSION, "cli-app-0.1.0", cli.namespace)
    assert recorded_version is not None

    result = cli("install", package("cli-app"), "-p", PASSWORD, "--instance", "second")

    assert result.code == 0, result.text
    assert result.out.splitlines() == ["instance.kplan.dev/second created", "parameters: password=*****"]
    kept = sim_kube.get(*OPERATOR_VERSION, "cli-app-0.1.0", cli.namespace)
    assert kept is not None and kept["metadata"]["uid"] == recorded_version["metadata"]["uid"]
    assert sorted(i["metadata"]["name"] for i in sim_kube.list(*INSTANCE, cli.namespace)) == ["cli-app", "second"]


def test_the_package_of_an_operator_task_is_recorded_and_its_child_deployed(
    cli: Cli, sim_kube: Kube, manager: Manager
) -> None:
    result = cli("install", package("cli-parent"), "--instance", "family", "-p", "greeting=hi", *WAIT)

    assert result.code == 0, result.text
    assert "operatorversion.kplan.dev/cli-child-0.1.0 created" in result.out
    ns = cli.namespace
    child = sim_kube.get(*INSTANCE, "family-child", ns)
    assert child is not None
    assert child["spec"]["operatorVersion"]["name"] == "cli-child-0.1.0"
    assert child["status"]["plans"]["deploy"]["status"] == "COMPLETE"
    assert sim_kube.get("v1", "ConfigMap", "family-child-config", ns)["data"] == {"greeting": "hi"}  # type: ignore[index]


def test_get_instances_lists_operator_version_plan_and_status(cli: Cli, manager: Manager) -> None:
    for name in ("alpha", "beta"):
        assert cli("install", package("cli-app"), "--instance", name, "-p", PASSWORD, *WAIT).code == 0

    table = cli("get", "instances")

    assert table.code == 0, table.text
    lines = table.out.splitlines()
    assert lines[0].split() == ["NAME", "OPERATOR", "VERSION", "PLAN", "STATUS", "AGE"]
    assert [line.split()[:5] for line in lines[1:]] == [
        ["alpha", "cli-app", "cli-app-0.1.0", "deploy", "COMPLETE"],
        ["beta", "cli-app", "cli-app-0.1.0", "deploy", "COMPLETE"],
    ]
    everywhere = cli("get", "instances", "-A").out.splitlines()
    assert everywhere[0].split()[:2] == ["NAMESPACE", "NAME"]
    assert [cli.namespace, "alpha"] in [line.split()[:2] for line in everywhere]
    listed = cli("get", "instances", "-o", "yaml").yaml()
    assert [i["spec"]["parameters"] for i in listed["items"]] == [{"password": "*****"}] * 2
    assert all("managedFields" not in i["metadata"] for i in listed["items"])


def test_init_dry_run_prints_the_crds_rbac_and_manager_deployment(cli: Cli) -> None:
    result = cli("init", "--dry-run", "-o", "yaml", "--image", "registry.example/kplan:9.9", namespaced=False)

    assert result.code == 0, result.text
    documents = list(yaml.safe_load_all(result.out))
    assert [(d["kind"], d["metadata"]["name"]) for d in documents] == [
        ("CustomResourceDefinition", "operators.kplan.dev"),
        ("CustomResourceDefinition", "operatorversions.kplan.dev"),
        ("CustomResourceDefinition", "instances.kplan.dev"),
        ("Namespace", "kplan-system"),
        ("ServiceAccount", "kplan-manager"),
        ("ClusterRole", "kplan-manager"),
        ("ClusterRoleBinding", "kplan-manager"),
        ("Deployment", "kplan-manager"),
    ]
    binding, deployment = documents[6], documents[7]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "kplan-manager", "namespace": "kplan-system"}]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "registry.example/kplan:9.9"
    assert container["args"][0] == "manager"
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "kplan-manager"


def test_init_applies_everything_and_waits_for_the_crds(cli: Cli, sim_kube: Kube) -> None:
    result = cli("init", "--manager-namespace", cli.namespace, namespaced=False)

    assert result.code == 0, result.text
    assert "customresourcedefinition.apiextensions.k8s.io/instances.kplan.dev established" in result.out
    assert sim_kube.get("v1", "ServiceAccount", "kplan-manager", cli.namespace) is not None
    role = sim_kube.get("rbac.authorization.k8s.io/v1", "ClusterRole", "kplan-manager")
    assert role is not None and {"kplan.dev"} in [set(rule["apiGroups"]) for rule in role["rules"]]
    deployment = sim_kube.get("apps/v1", "Deployment", "kplan-manager", cli.namespace)
    assert deployment is not None
    assert deployment["spec"]["template"]["spec"]["containers"][0]["args"][0] == "manager"
