"""`kplan package new|verify|create|list`: exit codes and what they print."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from engine.cli.main import main
from engine.package import loader

FIXTURES = Path(__file__).parent.parent / "fixtures" / "packages"
VALID = str(FIXTURES / "valid")


def test_new_writes_a_package_that_verifies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["package", "new", "shop", "-d", str(tmp_path)]) == 0
    assert capsys.readouterr().out == f"{tmp_path / 'shop'}\n"
    assert main(["package", "verify", str(tmp_path / "shop")]) == 0
    assert capsys.readouterr().out == "package shop 0.1.0 is valid\n"
    pkg = loader.load(str(tmp_path / "shop"))
    assert sorted(pkg.files) == [
        "README.md", "operator.yaml", "params.yaml", "templates/deployment.yaml", "templates/service.yaml",
        "tests/install/00-assert.yaml", "tests/install/00-install.yaml", "tests/kplan-test.yaml",
    ]


def test_new_renders_with_its_defaults(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["package", "new", "shop", "-d", str(tmp_path)])
    capsys.readouterr()
    assert main(["template", str(tmp_path / "shop"), "-p", "replicas=2"]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [("Deployment", "shop"), ("Service", "shop")]
    assert docs[0]["spec"]["replicas"] == 2


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Shop_1", "error: cannot create the package: 'Shop_1' is not a valid name"),
        ("shop", "error: cannot create the package: "),
    ],
)
def test_new_refuses_bad_names_and_existing_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, message: str
) -> None:
    (tmp_path / "shop").mkdir()
    assert main(["package", "new", name, "-d", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(message)
    assert err.count("\n") == 1


def test_verify_lists_every_problem_one_per_line_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["package", "verify", str(FIXTURES / "broken" / "many-problems")]) == 1
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 11
    assert lines[2] == "operator.yaml:4: maintainer: unknown field (error)"
    assert "templates/old.yaml: is not used by any task (warning)" in lines
    assert err == f"error: {FIXTURES / 'broken' / 'many-problems'} has 10 errors\n"


def test_verify_passes_with_warnings_printed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["package", "verify", str(FIXTURES / "broken" / "unused-template")]) == 0
    assert capsys.readouterr().out == (
        "templates/old.yaml: is not used by any task (warning)\npackage tiny 0.1.0 is valid (1 warning)\n"
    )


def test_verify_lists_files_that_cannot_be_read(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["package", "verify", str(FIXTURES / "broken" / "binary")]) == 1
    out, err = capsys.readouterr()
    assert out == "operator.yaml: is not UTF-8 text (error)\n"
    assert err.endswith("has 1 error\n")


def test_verify_of_a_missing_folder_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["package", "verify", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: no package at {tmp_path / 'none'}")
    assert err.count("\n") == 1


def test_create_prints_the_archive_path_and_it_loads_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["package", "create", VALID, "-d", str(tmp_path / "out")]) == 0
    path = capsys.readouterr().out.strip()
    assert path == str(tmp_path / "out" / "demo-0.3.0.tgz")
    assert loader.to_files(loader.load(path)) == loader.read_files(VALID)
    assert main(["package", "verify", path]) == 0


def test_create_of_an_invalid_package_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["package", "create", str(FIXTURES / "broken" / "cycle"), "-d", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err == (
        "error: package is invalid: operator.yaml:10: plans.deploy: has a dependency cycle: b -> c -> b (error)\n"
    )


def test_list_params_is_a_table_with_secret_defaults_redacted(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["package", "list", "params", VALID]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["NAME", "TYPE", "DEFAULT", "REQUIRED", "IMMUTABLE", "TRIGGER", "DESCRIPTION"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert rows["replicas"][:6] == ["replicas", "integer", "3", "no", "no", "update"]
    assert rows["password"][:3] == ["password", "string", "*****"]
    assert rows["storage"][4:6] == ["yes", "-"]  # an immutable parameter triggers nothing: it cannot change
    assert rows["labels"][2] == "{}"
    assert rows["schedule"][:5] == ["schedule", "string", "no", "no", "backup"]
    assert "changeme" not in "\n".join(lines)


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_list_params_as_data_redacts_secrets(capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    assert main(["package", "list", "params", VALID, "-o", fmt]) == 0
    out = capsys.readouterr().out
    data = json.loads(out) if fmt == "json" else yaml.safe_load(out)
    by_name = {p["name"]: p for p in data}
    assert by_name["password"]["default"] == "*****"
    assert by_name["password"]["secret"] is True
    assert by_name["replicas"] == {
        "name": "replicas", "description": "Number of nodes", "type": "integer", "default": 3, "enum": [1, 3, 5],
        "minimum": 1,
    }
    assert "schedule" in by_name and "default" not in by_name["schedule"]


def test_list_plans_shows_every_step(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["package", "list", "plans", VALID]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["PLAN", "PHASE", "STRATEGY", "STEP", "TASKS", "DEPENDS-ON"]
    assert [line.split() for line in lines[1:5]] == [
        ["deploy", "config", "serial", "config", "config"],
        ["deploy", "main", "parallel", "app", "app"],
        ["deploy", "main", "parallel", "init", "init", "app"],
        ["deploy", "main", "parallel", "monitoring", "monitoring"],
    ]
    assert ["update", "main", "serial", "app", "app,monitoring"] in [line.split() for line in lines]


def test_list_plans_as_yaml(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["package", "list", "plans", VALID, "-o", "yaml"]) == 0
    plans = yaml.safe_load(capsys.readouterr().out)
    assert sorted(plans) == ["backup", "cleanup", "deploy", "deps", "update"]
    assert plans["deploy"]["phases"][1]["steps"][1] == {
        "name": "init", "tasks": ["init"], "dependsOn": ["app"], "timeout": 600.0
    }


def test_list_tasks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["package", "list", "tasks", VALID]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert rows[0] == ["NAME", "KIND", "TEMPLATES"]
    assert ["app", "Apply", "service.yaml,statefulset.yaml"] in rows
    assert ["backup", "Pipe", "backup-pod.yaml"] in rows
    assert ["noop", "Dummy"] in rows
    assert len(rows) == 10


def test_list_tasks_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["package", "list", "tasks", VALID, "-o", "json"]) == 0
    tasks = {t["name"]: t for t in json.loads(capsys.readouterr().out)}
    assert tasks["cache"] == {
        "name": "cache", "kind": "Operator",
        "spec": {"package": "redis", "version": "0.3.0", "instanceName": "{{ Name }}-cache",
                 "parameters": {"replicas": "1"}},
    }
    assert tasks["app-ready"]["spec"]["timeout"] == 300.0


@pytest.mark.parametrize("argv", [["package"], ["package", "list", "things", VALID], ["package", "verify"]])
def test_usage_errors_exit_2(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
