"""The CLI surface of the Instance commands without a cluster: usage errors, `init --dry-run`, the manager's flags."""

from __future__ import annotations

import json

import pytest
import yaml

from engine.cli import flags, manifests
from engine.cli.main import build_parser, main


def test_init_dry_run_prints_a_yaml_stream_and_a_json_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--dry-run"]) == 0
    documents = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [d["kind"] for d in documents] == ["CustomResourceDefinition"] * 3 + [
        "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment"]

    assert main(["init", "--dry-run", "-o", "json", "--manager-namespace", "ops"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["kind"] == "List"
    assert {d["metadata"].get("namespace") for d in listed["items"][3:]} == {None, "ops"}


def test_the_manager_deployment_runs_flags_the_manager_accepts() -> None:
    deployment = manifests.manifests("kplan:test", "kplan-system")[-1]
    container = deployment["spec"]["template"]["spec"]["containers"][0]

    args = build_parser().parse_args(container["args"])

    assert args.command == "manager"
    assert args.metrics_addr == ("0.0.0.0", manifests.PROBE_PORT)
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"


def test_the_manager_may_manage_kplans_kinds_and_what_packages_apply() -> None:
    role = manifests.cluster_role()
    groups = [set(rule["apiGroups"]) for rule in role["rules"]]
    assert {"kplan.dev"} in groups and {"coordination.k8s.io"} in groups and {"*"} in groups


def test_update_without_values_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["update", "--instance", "shop"]) == 2
    assert capsys.readouterr().err == "error: update needs at least one -p NAME=VALUE or -P FILE\n"


@pytest.mark.parametrize("argv", [["update", "-p", "a=1"], ["diff"], ["plan", "trigger", "--instance", "x"],
                                  ["install"], ["install", "pkg", "--timeout", "soon"]])
def test_missing_or_malformed_arguments_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_global_flags_before_the_command_are_kept() -> None:
    args = build_parser().parse_args(["-n", "shop", "--context", "dev", "plan", "status", "--instance", "x"])
    assert (args.namespace, args.context, args.instance) == ("shop", "dev", "x")


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90.0), ("5m", 300.0), ("1h30m", 5400.0), ("12", 12.0)])
def test_durations(text: str, seconds: float) -> None:
    assert flags.duration(text) == seconds
