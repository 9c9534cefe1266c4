"""`kplan template PKG`: the plan's manifests as one YAML stream, stamped, in plan order, secrets hidden."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.cli.main import main

FIXTURES = Path(__file__).parent.parent / "fixtures" / "packages"
VALID = str(FIXTURES / "valid")


def rendered(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, Any]]:
    assert main(["template", *argv]) == 0
    return list(yaml.safe_load_all(capsys.readouterr().out))


def names(docs: list[dict[str, Any]]) -> list[str]:
    return [f"{d['kind']}/{d['metadata']['name']}" for d in docs]


def test_defaults_render_the_deploy_plan_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    docs = rendered(capsys, VALID)
    assert names(docs) == ["ConfigMap/demo-config", "Service/demo", "StatefulSet/demo", "Job/demo-init"]
    assert {d["metadata"]["namespace"] for d in docs} == {"default"}
    assert [d["metadata"]["annotations"]["kplan.dev/step"] for d in docs] == ["config", "app", "app", "init"]


def test_every_document_carries_the_stamped_labels(capsys: pytest.CaptureFixture[str]) -> None:
    for doc in rendered(capsys, VALID, "--instance", "cache", "-n", "shop"):
        assert doc["metadata"]["labels"] == {
            "app.kubernetes.io/managed-by": "kplan",
            "kplan.dev/instance": "cache",
            "kplan.dev/operator": "demo",
        }
        assert doc["metadata"]["annotations"]["kplan.dev/plan"] == "deploy"
        assert doc["metadata"]["namespace"] == "shop"


def test_parameters_from_flags_override_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    values = tmp_path / "values.yaml"
    values.write_text("replicas: 5\nimage: redis:8\nlabels: {tier: cache}\n")
    docs = rendered(capsys, VALID, "-P", str(values), "-p", "replicas=1", "-p", "monitoring=yes")
    sts = next(d for d in docs if d["kind"] == "StatefulSet")
    assert sts["spec"]["replicas"] == 1
    assert sts["spec"]["template"]["spec"]["containers"][0]["image"] == "redis:8"
    assert sts["spec"]["template"]["metadata"]["labels"]["tier"] == "cache"
    assert "ServiceMonitor/demo" in names(docs)


def test_secret_parameters_are_hidden_unless_asked(capsys: pytest.CaptureFixture[str]) -> None:
    def password(*argv: str) -> str:
        sts = next(d for d in rendered(capsys, VALID, *argv) if d["kind"] == "StatefulSet")
        return str(sts["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"])

    assert password("-p", "password=hunter2hunter2") == "*****"
    assert password("-p", "password=hunter2hunter2", "--show-secrets") == "hunter2hunter2"


def test_one_step_of_another_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert names(rendered(capsys, VALID, "--plan", "backup", "--step", "backup")) == ["Pod/demo-backup"]


def test_what_the_plan_deletes_is_left_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert rendered(capsys, VALID, "--plan", "cleanup") == []
    assert "ServiceMonitor/demo" not in names(rendered(capsys, VALID, "-p", "monitoring=false"))


def test_json_output_is_a_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["template", VALID, "-o", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 4


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--plan", "nope"], "error: the package has no plan named 'nope'\n"),
        (["--step", "nope"], "error: plan 'deploy' has no step named 'nope'\n"),
        (["-p", "replicas=2"], "error: parameter 'replicas' must be one of 1, 3, 5, got 2\n"),
        (["-p", "colour=red"], "error: parameter 'colour' is not declared by package 'demo'\n"),
    ],
)
def test_errors_are_one_sentence(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert main(["template", VALID, *argv]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", message)


def test_a_parameter_without_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["template", VALID, "-p", "replicas"])
    assert exit_.value.code == 2
    assert "argument -p/--parameter: 'replicas' is not NAME=VALUE" in capsys.readouterr().err


def test_a_required_parameter_without_value_fails(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["package", "new", "shop", "-d", str(tmp_path)]) == 0
    params = tmp_path / "shop" / "params.yaml"
    params.write_text(params.read_text().replace("    default: nginx:1.27\n", ""))
    capsys.readouterr()
    assert main(["template", str(tmp_path / "shop")]) == 1
    assert capsys.readouterr().err == "error: parameter 'image' is required and has no default\n"


def test_an_operator_task_step_prints_the_child_instance(capsys: pytest.CaptureFixture[str]) -> None:
    parent = str(Path(__file__).parent.parent / "e2e" / "packages" / "cli-parent")
    [child] = rendered(capsys, parent, "--step", "child", "-p", "greeting=hi")
    assert (child["kind"], child["metadata"]["name"]) == ("Instance", "cli-parent-child")
    assert child["spec"] == {"operatorVersion": {"name": "cli-child-0.1.0"}, "parameters": {"greeting": "hi"}}
    assert child["metadata"]["labels"]["kplan.dev/instance"] == "cli-parent"


def test_an_output_format_template_does_not_print_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["template", VALID, "-o", "mermaid"]) == 2
    assert capsys.readouterr().err == "error: template does not take -o mermaid (it prints yaml, json)\n"
