"""`kubectl kplan update|upgrade|rollback|uninstall` and `plan status|history|trigger` with a manager running.

A parameter change runs the plan its trigger names; an immutable one is refused by the CLI and nothing
changes; plan status prints the tree and follows it; plan trigger runs a plan the package has and refuses
others; upgrade runs the upgrade plan, prunes what the new version dropped and refuses what `upgradableFrom`
excludes; rollback restores the previous version and parameters (secrets keep their value); uninstall runs
cleanup and leaves no kplan-labelled object.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from cli_harness import INSTANCE, SECRET, Cli, Result, package

from engine.controller import Manager
from engine.kube import Kube

if TYPE_CHECKING:
    from conftest import Changes, Kplan

WAIT = ("--wait", "--timeout", "60s")
REDIS = str(Path(__file__).parent.parent.parent / "operators" / "redis")


@pytest.fixture
def cli(sim_kubeconfig: Path, sim_namespace: str, sim_kube: Kube) -> Cli:
    return Cli(sim_kubeconfig, sim_namespace)


def installed(cli: Cli, name: str = "shop", *params: str) -> Result:
    result = cli("install", package("cli-app"), "--instance", name, "-p", f"password={SECRET}", *params, *WAIT)
    assert result.code == 0, result.text
    return result


def error_line(result: Result) -> str:
    assert result.code == 1, result.text
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    return lines[0]


def instance(kube: Kube, cli: Cli, name: str = "shop") -> dict[str, Any]:
    found = kube.get(*INSTANCE, name, cli.namespace)
    assert found is not None
    return found


def configmap(kube: Kube, cli: Cli, name: str) -> dict[str, Any] | None:
    return kube.get("v1", "ConfigMap", name, cli.namespace)


def test_a_parameter_with_trigger_backup_runs_the_backup_plan(cli: Cli, sim_kube: Kube, manager: Manager) -> None:
    installed(cli)

    result = cli("update", "--instance", "shop", "-p", "note=nightly", *WAIT)

    assert result.code == 0, result.text
    assert "instance.kplan.dev/shop updated (note=nightly); plan backup runs" in result.out
    assert "plan backup: COMPLETE" in result.out
    assert configmap(sim_kube, cli, "shop-backup")["data"] == {"note": "nightly"}  # type: ignore[index]
    found = instance(sim_kube, cli)
    assert found["spec"]["parameters"] == {"password": SECRET, "note": "nightly"}
    assert set(found["status"]["plans"]) == {"deploy", "backup"}  # the update plan did not run


def test_an_immutable_parameter_change_is_refused_and_nothing_changes(
    cli: Cli, sim_kube: Kube, manager: Manager
) -> None:
    installed(cli)
    before = instance(sim_kube, cli)

    result = cli("update", "--instance", "shop", "-p", "zone=b", "-p", "replicas=2")

    assert "parameter 'zone' is immutable and cannot be changed after install" in error_line(result)
    after = instance(sim_kube, cli)
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert after["spec"] == before["spec"]


def test_an_update_to_the_values_it_has_changes_nothing(cli: Cli, sim_kube: Kube, manager: Manager) -> None:
    installed(cli)
    before = instance(sim_kube, cli)

    result = cli("update", "--instance", "shop", "-p", "replicas=1", *WAIT)

    assert result.code == 0, result.text
    assert "unchanged" in result.out
    assert instance(sim_kube, cli)["metadata"]["generation"] == before["metadata"]["generation"]


def test_plan_status_prints_the_tree_of_every_plan(cli: Cli, manager: Manager) -> None:
    installed(cli)

    lines = cli.ok("plan", "status", "--instance", "shop").out.splitlines()

    assert lines[:3] == [f'Plan(s) for "shop" in namespace "{cli.namespace}":', ".",
                         '└── shop (Operator-Version: "cli-app-0.1.0" Active-Plan: "deploy")']
    assert lines[3:6] == [
        "    ├── Plan backup (serial strategy) [NEVER_RUN]",
        "    │   └── Phase main (serial strategy) [NEVER_RUN]",
        "    │       └── Step backup [NEVER_RUN]",
    ]
    deploy = next(i for i, line in enumerate(lines) if "Plan deploy" in line)
    assert lines[deploy].startswith("    ├── Plan deploy (serial strategy) [COMPLETE], last updated ")
    assert [line.split(" (")[0].strip(" │├└─") for line in lines[deploy + 1:deploy + 6]] == [
        "Phase config", "Step config [COMPLETE]", "Step legacy [COMPLETE]", "Phase app", "Step app [COMPLETE]",
    ]
    status = cli.ok("plan", "status", "--instance", "shop", "-o", "yaml").yaml()
    assert status["plans"]["deploy"]["status"] == "COMPLETE"
    assert status["activePlan"]["name"] == "deploy"


def test_plan_trigger_runs_a_plan_of_the_package_and_refuses_others(
    cli: Cli, sim_kube: Kube, manager: Manager
) -> None:
    installed(cli)

    refused = cli("plan", "trigger", "restore", "--instance", "shop")
    assert ("package cli-app 0.1.0 has no plan named 'restore' (its plans: backup, cleanup, deploy, update)"
            in error_line(refused))
    assert "planExecution" not in instance(sim_kube, cli)["spec"]

    result = cli("plan", "trigger", "backup", "--instance", "shop", *WAIT)

    assert result.code == 0, result.text
    assert "plan backup: COMPLETE" in result.out
    assert configmap(sim_kube, cli, "shop-backup")["data"] == {"note": "none"}  # type: ignore[index]
    uid = instance(sim_kube, cli)["status"]["plans"]["backup"]["uid"]
    history = cli.ok("plan", "history", "--instance", "shop").out.splitlines()
    assert history[0].split()[:3] == ["PLAN", "STATUS", "UID"]
    assert ["backup", "COMPLETE", uid] in [line.split()[:3] for line in history]
    assert ["1", "cli-app-0.1.0"] in [line.split()[:2] for line in history]


def test_triggering_hello_worlds_rerun_runs_its_jobs_again(cli: Cli, sim_kube: Kube, manager: Manager) -> None:
    hello_world = str(Path(__file__).parent.parent.parent / "operators" / "hello-world")
    # One node, so both node steps go to it: every simulated node is labelled node.kplan.dev/name=<its name>.
    node = min(n["metadata"]["name"] for n in sim_kube.list("v1", "Node"))
    cli.ok("install", hello_world, "--instance", "hello", "-p", f"firstNode={node}", "-p", f"secondNode={node}",
           *WAIT)
    before = {j["metadata"]["name"]: j["metadata"]["uid"] for j in sim_kube.list("batch/v1", "Job", cli.namespace)}

    result = cli.ok("plan", "trigger", "rerun", "--instance", "hello", *WAIT)

    assert "plan rerun: COMPLETE" in result.out
    after = {j["metadata"]["name"]: j["metadata"]["uid"] for j in sim_kube.list("batch/v1", "Job", cli.namespace)}
    assert sorted(after) == sorted(before) and len(before) == 2  # the same Jobs (print, execute) ...
    assert not set(after.values()) & set(before.values())  # ... made again: they ran again


def test_plan_status_wait_follows_the_plan_to_its_end(cli: Cli, manager: Manager) -> None:
    installed(cli)
    cli.ok("plan", "trigger", "backup", "--instance", "shop")

    result = cli("plan", "status", "--instance", "shop", "--plan", "backup", *WAIT)

    assert result.code == 0, result.text
    last_tree = result.out.strip().split("\n\n")[-1]
    assert "Plan backup (serial strategy) [COMPLETE]" in last_tree
    assert "Step backup [COMPLETE]" in last_tree


def test_upgrade_prunes_what_the_new_version_dropped_and_rollback_restores_the_previous_one(
    cli: Cli, sim_kube: Kube, kplan: Kplan, manager: Manager
) -> None:
    installed(cli, "shop", "-p", "replicas=2")
    cli.ok("update", "--instance", "shop", "-p", "note=kept", *WAIT)
    assert configmap(sim_kube, cli, "shop-legacy") is not None
    excluded = cli("upgrade", package("cli-app-v3"), "--instance", "shop")
    assert "cannot upgrade cli-app from 0.1.0 to 0.3.0: 0.3.0 is upgradable only from 0.2.x" in error_line(excluded)

    upgraded = cli("upgrade", package("cli-app-v2"), "--instance", "shop", "-p", "tier=silver", *WAIT)

    assert upgraded.code == 0, upgraded.text
    assert "plan upgrade: COMPLETE" in upgraded.out
    spec = instance(sim_kube, cli)["spec"]
    assert spec["operatorVersion"] == {"name": "cli-app-0.2.0"}
    assert spec["parameters"] == {"password": SECRET, "replicas": 2, "note": "kept", "tier": "silver"}
    assert configmap(sim_kube, cli, "shop-migrated")["data"] == {"tier": "silver"}  # type: ignore[index]
    kplan.wait(lambda: configmap(sim_kube, cli, "shop-legacy") is None)
    older = cli("upgrade", package("cli-app"), "--instance", "shop")
    assert "the new version must be newer" in error_line(older)

    rolled = cli("rollback", "--instance", "shop", *WAIT)

    assert rolled.code == 0, rolled.text
    assert "rolled back to cli-app-0.1.0" in rolled.out
    spec = instance(sim_kube, cli)["spec"]
    assert spec["operatorVersion"] == {"name": "cli-app-0.1.0"}
    assert spec["parameters"] == {"password": SECRET, "replicas": 2, "note": "kept", "zone": "a"}
    assert configmap(sim_kube, cli, "shop-legacy") is not None
    assert configmap(sim_kube, cli, "shop-config")["data"]["version"] == "0.1.0"  # type: ignore[index]
    kplan.wait(lambda: configmap(sim_kube, cli, "shop-migrated") is None)


def test_uninstall_of_a_child_instance_is_refused_naming_its_parent_unless_forced(
    cli: Cli, sim_kube: Kube, manager: Manager
) -> None:
    cli.ok("install", package("cli-parent"), "--instance", "family", "-p", "greeting=hi", *WAIT)

    refused = cli("uninstall", "--instance", "family-child")

    assert ("instance 'family-child' belongs to instance 'family', whose Operator task would create it again; "
            "uninstall 'family' instead, or give --force to delete it anyway") in error_line(refused)
    assert sim_kube.get(*INSTANCE, "family-child", cli.namespace)["metadata"].get("deletionTimestamp") is None  # type: ignore[index]
    forced = cli.ok("uninstall", "--instance", "family-child", "--force")
    assert 'instance.kplan.dev "family-child" deleted' in forced.out


def test_uninstall_says_which_volumes_it_keeps_and_deletes_them_when_asked(
    cli: Cli, sim_kube: Kube, manager: Manager, kplan: Kplan
) -> None:
    cli.ok("install", REDIS, "--instance", "cache", "-p", "replicas=1", *WAIT)
    claims = sim_kube.list("v1", "PersistentVolumeClaim", cli.namespace, label_selector="kplan.dev/instance=cache")
    assert [c["metadata"]["name"] for c in claims] == ["data-cache-0"]  # labelled through the claim template

    kept = cli.ok("uninstall", "--instance", "cache", *WAIT)

    assert (f"kept 1 volume with their data (PVCs its StatefulSets made): data-cache-0; delete them with "
            f"`kplan uninstall --instance cache -n {cli.namespace} --delete-volumes`") in kept.out
    assert sim_kube.get("v1", "PersistentVolumeClaim", "data-cache-0", cli.namespace) is not None
    deleted = cli.ok("uninstall", "--instance", "cache", "--delete-volumes")
    assert 'persistentvolumeclaim "data-cache-0" deleted' in deleted.out
    kplan.wait(lambda: sim_kube.get("v1", "PersistentVolumeClaim", "data-cache-0", cli.namespace) is None)


def test_rollback_without_an_earlier_version_or_parameters_is_refused(cli: Cli, manager: Manager) -> None:
    installed(cli)

    result = cli("rollback", "--instance", "shop")

    assert "instance 'shop' has no earlier version or parameters to roll back to" in error_line(result)


def test_uninstall_runs_cleanup_and_leaves_no_kplan_labelled_object(
    cli: Cli, sim_kube: Kube, manager: Manager, changes: Changes
) -> None:
    installed(cli)

    result = cli("uninstall", "--instance", "shop", *WAIT)

    assert result.code == 0, result.text
    assert "plan cleanup: COMPLETE" in result.out
    assert changes.added("Job", "shop-cleanup") > changes.added("Deployment", "shop")
    assert sim_kube.get(*INSTANCE, "shop", cli.namespace) is None
    selector = "kplan.dev/instance=shop"
    kinds = [("v1", "ConfigMap"), ("v1", "Secret"), ("apps/v1", "Deployment"), ("batch/v1", "Job")]
    assert [o["metadata"]["name"] for api, kind in kinds
            for o in sim_kube.list(api, kind, cli.namespace, label_selector=selector)] == []
    missing = cli("uninstall", "--instance", "shop")
    assert f"instance 'shop' not found in namespace '{cli.namespace}'" in error_line(missing)
