"""`kubectl kplan run` (one-shot, no manager), `diff`, and secrets kept out of every command's output.

`run` produces the same objects and final plan statuses as the manager for the same package; it runs a
requested plan of an existing Instance, drives the children of Operator tasks, and ends with exit 1 when
the plan ends FATAL_ERROR; uninstall drives the cleanup of what `run` installed. `diff` shows nothing for
a fresh Instance and a diff with drift lines after a `kubectl edit` (exit 1), masking Secret values.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_harness import BIN, INSTANCE, KUBECTL, SECRET, Cli, Result, package

from engine.apiserver.faults import FaultProfile
from engine.controller import Manager
from engine.devcluster.cluster import DevCluster
from engine.kube import Kube

PASSWORD = f"password={SECRET}"
HELLO_WORLD = str(Path(__file__).parent.parent.parent / "operators" / "hello-world")
TIMEOUT = ("--timeout", "60s")
OBJECT_KINDS = [("v1", "ConfigMap"), ("v1", "Secret"), ("apps/v1", "Deployment")]
SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "namespace")


@pytest.fixture
def cli(sim_kubeconfig: Path, sim_namespace: str, sim_kube: Kube) -> Cli:
    return Cli(sim_kubeconfig, sim_namespace)


@pytest.fixture
def other_namespace(sim_kube: Kube) -> Iterator[str]:
    name = f"r-{uuid.uuid4().hex[:10]}"
    sim_kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    sim_kube.delete("v1", "Namespace", name)


def error_line(result: Result) -> str:
    assert result.code == 1, result.text
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    return lines[0]


def comparable(obj: dict[str, Any]) -> dict[str, Any]:
    """An object without what the server assigns (uids, versions, times) or what only a controller writes."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in SERVER_METADATA}
    meta["ownerReferences"] = [{k: v for k, v in o.items() if k != "uid"} for o in meta.get("ownerReferences", [])]
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}


def objects_of(kube: Kube, namespace: str, name: str) -> dict[tuple[str, str], dict[str, Any]]:
    selector = f"kplan.dev/instance={name}"
    return {(kind, o["metadata"]["name"]): comparable(o) for api, kind in OBJECT_KINDS
            for o in kube.list(api, kind, namespace, label_selector=selector)}


def plan_statuses(instance: dict[str, Any]) -> dict[str, Any]:
    return {name: (record["status"], [(phase["name"], phase["status"], [(s["name"], s["status"], s.get("message"))
                                                                         for s in phase["steps"]])
                                      for phase in record["phases"]])
            for name, record in instance["status"]["plans"].items()}


def test_run_produces_the_same_objects_and_plan_statuses_as_the_manager(
    cli: Cli, sim_kube: Kube, sim_kubeconfig: Path, other_namespace: str, manager: Manager
) -> None:
    args = ("--instance", "same", "-p", PASSWORD, "-p", "replicas=3")
    cli.ok("install", package("cli-app"), *args, "--wait", *TIMEOUT)
    alone = Cli(sim_kubeconfig, other_namespace)

    result = alone("run", package("cli-app"), *args, *TIMEOUT)

    assert result.code == 0, result.text
    assert result.out.splitlines()[:7] == [
        "operator.kplan.dev/cli-app created", "operatorversion.kplan.dev/cli-app-0.1.0 created",
        "instance.kplan.dev/same created", "plan deploy: started",
        "deploy/config/config: started", "deploy/config/legacy: started", "deploy/config/config: COMPLETE",
    ]
    assert "Step app [COMPLETE]" in result.out
    by_manager, by_run = (sim_kube.get(*INSTANCE, "same", ns) for ns in (cli.namespace, other_namespace))
    assert by_manager is not None and by_run is not None
    assert by_run["metadata"]["annotations"] == {"kplan.dev/runner": "cli"}
    assert by_run["spec"] == by_manager["spec"]
    assert plan_statuses(by_run) == plan_statuses(by_manager)
    assert objects_of(sim_kube, other_namespace, "same") == objects_of(sim_kube, cli.namespace, "same")
    assert len(objects_of(sim_kube, other_namespace, "same")) == 4  # config, legacy, auth, the Deployment


@pytest.mark.dev_only("the latency is the dev cluster's fault profile")
def test_run_has_written_its_events_when_it_exits(tmp_path: Path) -> None:
    # Every request of a slow server takes a tenth of a second, the last Event's too: it is recorded with the
    # plan's end, written by the recorder's thread, and on the server when the command has exited.
    slow = FaultProfile(latency_seconds=0.1)
    with DevCluster(simulate=True, nodes=("node-1",), faults=slow) as cluster:
        cluster.request("POST", "/api/v1/namespaces", body={"metadata": {"name": "told"}})
        cli = Cli(cluster.write_kubeconfig(tmp_path / "config"), "told")

        cli.ok("run", package("cli-app"), "--instance", "told", "-p", PASSWORD, *TIMEOUT)

        _, events = cluster.request("GET", "/api/v1/namespaces/told/events")  # no wait: written by the exit
        reasons = {e["reason"] for e in events["items"] if e["involvedObject"].get("kind") == "Instance"}
        assert {"PlanStarted", "PlanComplete"} <= reasons, reasons


def test_run_on_an_existing_instance_runs_the_plan_asked_for_or_the_one_a_change_triggers(
    cli: Cli, sim_kube: Kube
) -> None:
    cli.ok("run", package("cli-app"), "--instance", "solo", "-p", PASSWORD, *TIMEOUT)

    requested = cli.ok("run", package("cli-app"), "--instance", "solo", "--plan", "backup", *TIMEOUT)
    assert "plan backup: COMPLETE" in requested.out
    changed = cli.ok("run", package("cli-app"), "--instance", "solo", "-p", "note=weekly", *TIMEOUT)
    assert "instance.kplan.dev/solo changed (note=weekly); plan backup runs" in changed.out
    assert sim_kube.get("v1", "ConfigMap", "solo-backup", cli.namespace)["data"] == {"note": "weekly"}  # type: ignore[index]
    unchanged = cli.ok("run", package("cli-app"), "--instance", "solo", *TIMEOUT)
    assert "instance.kplan.dev/solo unchanged" in unchanged.out
    unknown = cli("run", package("cli-app"), "--instance", "solo", "--plan", "restore")
    assert "has no plan named 'restore'" in error_line(unknown)
    upgraded = cli.ok("run", package("cli-app-v2"), "--instance", "solo", *TIMEOUT)
    assert "instance.kplan.dev/solo changed; plan upgrade runs" in upgraded.out
    assert "plan upgrade: COMPLETE" in upgraded.out
    assert sim_kube.get(*INSTANCE, "solo", cli.namespace)["spec"]["operatorVersion"] == {  # type: ignore[index]
        "name": "cli-app-0.2.0"}


def test_commands_on_a_run_instance_say_that_kplan_run_must_drive_the_plan(cli: Cli, sim_kube: Kube) -> None:
    cli.ok("run", package("cli-app"), "--instance", "solo", "-p", PASSWORD, *TIMEOUT)

    updated = cli.ok("update", "--instance", "solo", "-p", "note=weekly")
    triggered = cli.ok("plan", "trigger", "backup", "--instance", "solo")

    pending = "plan backup runs when `kplan run PKG --instance solo` drives it"
    assert pending in updated.out and pending in triggered.out
    driven = cli.ok("run", package("cli-app"), "--instance", "solo", *TIMEOUT)
    assert "plan backup: COMPLETE" in driven.out
    assert sim_kube.get("v1", "ConfigMap", "solo-backup", cli.namespace)["data"] == {"note": "weekly"}  # type: ignore[index]


def test_run_past_its_timeout_prints_the_tree_and_what_the_plan_waits_for(cli: Cli) -> None:
    result = cli("run", HELLO_WORLD, "--instance", "stuck", "-p", "firstNode=nowhere", "--timeout", "2s")

    line = error_line(result)
    assert "the plan of instance 'stuck' did not end within 2s; plan deploy is IN_PROGRESS (step print: " in line
    assert "cannot be scheduled" in line
    assert "Step print [IN_PROGRESS]: Job " in result.out


def test_run_whose_reader_goes_away_drives_the_plan_to_its_end(cli: Cli, sim_kube: Kube) -> None:
    command = [KUBECTL, "kplan", "run", package("cli-app"), "--instance", "piped", "-p", PASSWORD, *TIMEOUT,
               "-n", cli.namespace]
    environment = {**os.environ, "KUBECONFIG": str(cli.kubeconfig), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment) as run:
        assert run.stdout is not None and run.stderr is not None
        first = run.stdout.readline()  # as `| head -1` reads
        run.stdout.close()
        code, err = run.wait(60), run.stderr.read()

    assert first.startswith("operator.kplan.dev/cli-app")
    assert (code, err) == (0, "")
    status = sim_kube.get(*INSTANCE, "piped", cli.namespace)["status"]  # type: ignore[index]
    assert status["plans"]["deploy"]["status"] == "COMPLETE"


def test_run_refuses_an_instance_the_manager_drives(cli: Cli, manager: Manager) -> None:
    cli.ok("install", package("cli-app"), "--instance", "managed", "-p", PASSWORD, "--wait", *TIMEOUT)

    result = cli("run", package("cli-app"), "--instance", "managed", "--plan", "backup")

    assert "instance 'managed' is driven by the manager" in error_line(result)


def test_run_drives_the_child_instances_of_operator_tasks(cli: Cli, sim_kube: Kube) -> None:
    result = cli("run", package("cli-parent"), "--instance", "family", "-p", "greeting=hi", *TIMEOUT)

    assert result.code == 0, result.text
    assert "family-child: plan deploy: COMPLETE" in result.out
    child = sim_kube.get(*INSTANCE, "family-child", cli.namespace)
    assert child is not None
    assert child["metadata"]["annotations"]["kplan.dev/runner"] == "cli"
    assert child["status"]["plans"]["deploy"]["status"] == "COMPLETE"
    data = sim_kube.get("v1", "ConfigMap", "family-child-config", cli.namespace)["data"]  # type: ignore[index]
    assert data == {"greeting": "hi"}


def test_run_exits_1_with_the_failing_step_when_the_plan_ends_fatal_error(cli: Cli, sim_kube: Kube) -> None:
    taken = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "taken-config", "namespace": cli.namespace},
             "data": {"zone": "theirs"}}
    sim_kube.apply(taken, field_manager="someone-else")

    result = cli("run", package("cli-app"), "--instance", "taken", "-p", PASSWORD, *TIMEOUT)

    line = error_line(result)
    assert "plan deploy of instance 'taken' ended FATAL_ERROR: step config:" in line
    assert "someone-else" in line
    assert "deploy/config/config: FATAL_ERROR" in result.out


def test_uninstall_of_a_run_instance_drives_its_cleanup(cli: Cli, sim_kube: Kube) -> None:
    cli.ok("run", package("cli-app"), "--instance", "solo", "-p", PASSWORD, *TIMEOUT)

    result = cli("uninstall", "--instance", "solo", *TIMEOUT)

    assert result.code == 0, result.text
    assert "plan cleanup: COMPLETE" in result.out
    assert sim_kube.get(*INSTANCE, "solo", cli.namespace) is None
    assert objects_of(sim_kube, cli.namespace, "solo") == {}


def test_diff_shows_drift_after_a_kubectl_edit(cli: Cli, tmp_path: Path) -> None:
    cli.ok("run", package("cli-app"), "--instance", "solo", "-p", PASSWORD, *TIMEOUT)
    fresh = cli("diff", "--instance", "solo")
    assert (fresh.code, fresh.out) == (0, ""), fresh.text
    editor = tmp_path / "edit.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/zone: a/zone: q/' \"$1\"\n")
    editor.chmod(0o755)
    edited = cli.kubectl("edit", "configmap/solo-config", env={"KUBE_EDITOR": str(editor)})
    assert edited.code == 0, edited.text

    result = cli("diff", "--instance", "solo")

    assert result.code == 1, result.text
    lines = result.out.splitlines()
    assert lines[:2] == ["--- live/ConfigMap/" + cli.namespace + "/solo-config",
                         "+++ kplan/ConfigMap/" + cli.namespace + "/solo-config"]
    assert "-  zone: q" in lines and "+  zone: a" in lines
    assert f"drift: ConfigMap {cli.namespace}/solo-config .data.zone: kplan applies a, live has q" in lines
    assert any(line.startswith("conflict: ") and '"kubectl-edit" on .data.zone' in line for line in lines)


def test_diff_masks_secret_values_and_exits_2_on_errors(cli: Cli, sim_kube: Kube) -> None:
    cli.ok("run", package("cli-app"), "--instance", "solo", "-p", PASSWORD, *TIMEOUT)
    sim_kube.patch("v1", "Secret", "solo-auth", cli.namespace, {"stringData": {"password": "Changed-by-hand"}},
                   field_manager="kubectl-edit")

    result = cli("diff", "--instance", "solo")

    assert result.code == 1, result.text
    assert "Changed-by-hand" not in result.text
    assert f"drift: Secret {cli.namespace}/solo-auth .data.password: kplan applies *****, live has *****" in result.out
    missing = cli("diff", "--instance", "nobody")
    assert missing.code == 2 and "instance 'nobody' not found" in missing.err


def test_secret_values_never_appear_in_any_output(cli: Cli, manager: Manager) -> None:
    """The harness fails any command whose output holds the secret; this runs every kind of command with it."""
    cli.ok("install", package("cli-app"), "--instance", "vault", "-p", PASSWORD, "--wait", *TIMEOUT)
    updated = cli.ok("update", "--instance", "vault", "-p", f"password={SECRET}-2", "-p", "replicas=2", "--wait",
                     *TIMEOUT)
    assert "updated (password=*****, replicas=2)" in updated.out
    for args in (("get", "instances"), ("get", "instances", "-o", "yaml"), ("get", "instances", "-o", "json"),
                 ("plan", "status", "--instance", "vault"), ("plan", "status", "--instance", "vault", "-o", "json"),
                 ("plan", "history", "--instance", "vault"), ("plan", "history", "--instance", "vault", "-o", "yaml"),
                 ("diff", "--instance", "vault")):
        assert cli(*args).code in (0, 1)
    cli.ok("uninstall", "--instance", "vault", "--wait", *TIMEOUT)
    assert len(cli.outputs) == 11
    assert all(SECRET not in text for text in cli.outputs)
