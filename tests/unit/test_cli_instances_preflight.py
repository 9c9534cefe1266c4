"""What install, upgrade and run check before touching the cluster, and the objects they record."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from engine.cli import records
from engine.cli.preflight import prepare
from engine.cli.sources import is_reference
from engine.errors import PackageInvalid, ParameterInvalid, PermanentError, RenderError
from engine.package import loader

PACKAGES = Path(__file__).parent.parent / "e2e" / "packages"
APP = str(PACKAGES / "cli-app")


def test_a_package_is_loaded_its_values_resolved_and_only_given_ones_kept() -> None:
    prepared = prepare(APP, None, ["password=long-enough", "replicas=2"], None, "ns")

    assert prepared.pkg.version_name == "cli-app-0.1.0"
    assert prepared.given == {"password": "long-enough", "replicas": 2}
    assert prepared.values == {"password": "long-enough", "replicas": 2, "note": "none", "zone": "a"}
    assert prepared.dependencies == ()


def test_the_kinds_every_plan_applies_are_known_before_the_cluster_is_asked() -> None:
    prepared = prepare(APP, None, ["password=long-enough"], None, "ns")

    assert prepared.kinds == {("v1", "ConfigMap"), ("v1", "Secret"), ("apps/v1", "Deployment"), ("batch/v1", "Job")}


def test_values_from_a_file_are_overridden_by_assignments(tmp_path: Path) -> None:
    values = tmp_path / "values.yaml"
    values.write_text("password: from-the-file\nreplicas: 3\n")

    prepared = prepare(APP, str(values), ["replicas=4"], None, "ns")

    assert prepared.given == {"password": "from-the-file", "replicas": 4}


def test_an_existing_instances_values_are_the_base_of_a_change() -> None:
    prepared = prepare(APP, None, ["note=x"], "shop", "ns", base={"password": "long-enough", "gone": 1})
    assert prepared.given == {"note": "x"}
    assert prepared.values["password"] == "long-enough"


@pytest.mark.parametrize("source", ["redis", "redis@0.3.0", "cli-app", "stable/redis", "redis@>=1.2,<2"])
def test_a_bare_name_is_for_repositories_and_none_is_configured(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert is_reference(source)
    with pytest.raises(PermanentError, match="no package repositories are configured"):
        prepare(source, None, [], None, "ns")


def test_paths_and_urls_are_not_bare_names(tmp_path: Path) -> None:
    assert not is_reference(APP)
    assert not is_reference("./missing")
    assert not is_reference("https://example.org/redis-0.3.0.tgz")
    assert not is_reference("redis-0.3.0.tgz")
    with pytest.raises(PermanentError, match=re.escape("no package at ./missing")):
        prepare("./missing", None, [], None, "ns")


def test_every_plan_is_rendered_and_a_failure_names_the_plan() -> None:
    with pytest.raises(RenderError, match=r"backup.yaml:6: the target parameter must be set \(plan backup\)"):
        prepare(str(PACKAGES / "cli-broken-render"), None, [], None, "ns")
    assert prepare(str(PACKAGES / "cli-broken-render"), None, ["target=s3"], None, "ns").values == {"target": "s3"}


def test_an_invalid_package_is_refused_with_its_problems() -> None:
    with pytest.raises(PackageInvalid, match="names the task 'missing'"):
        prepare(str(PACKAGES / "cli-broken-verify"), None, [], None, "ns")


def test_a_refused_secret_value_is_never_part_of_the_message() -> None:
    with pytest.raises(ParameterInvalid) as refused:
        prepare(APP, None, ["password=short"], None, "ns")
    assert str(refused.value) == "parameter 'password' must have at least 8 characters"


def test_an_invalid_instance_name_is_refused() -> None:
    with pytest.raises(PermanentError, match="instance name 'Shop_1' is not valid"):
        prepare(APP, None, ["password=long-enough"], "Shop_1", "ns")


def test_an_operator_tasks_package_is_found_beside_its_parent() -> None:
    prepared = prepare(str(PACKAGES / "cli-parent"), None, [], "family", "ns")

    [dependency] = prepared.dependencies
    assert dependency.task == "child"
    assert dependency.version_name == "cli-child-0.1.0"
    assert dependency.pkg is not None and dependency.pkg.name == "cli-child"
    assert [p.version_name for p in records.packages_to_record(prepared.pkg, prepared.dependencies)] == [
        "cli-parent-0.1.0", "cli-child-0.1.0",
    ]


def test_a_dependency_of_another_version_than_the_task_names_is_refused(tmp_path: Path) -> None:
    shutil.copytree(PACKAGES / "cli-parent", tmp_path / "cli-parent")
    shutil.copytree(PACKAGES / "cli-child", tmp_path / "cli-child")
    operator = tmp_path / "cli-parent" / "operator.yaml"
    operator.write_text(operator.read_text().replace("version: 0.1.0", "version: 0.2.0"))

    expected = re.escape("installs OperatorVersion 'cli-child-0.2.0', but the package at")
    with pytest.raises(PermanentError, match=expected):
        prepare(str(tmp_path / "cli-parent"), None, [], "family", "ns")


def test_a_dependency_the_task_gives_bad_parameters_is_refused() -> None:
    with pytest.raises(PermanentError, match="task child gives package cli-child a bad parameter"):
        prepare(str(PACKAGES / "cli-parent"), None, ["greeting="], "family", "ns")


def test_the_recorded_objects_carry_the_package_and_only_the_given_values() -> None:
    pkg = loader.load(APP)

    version = records.operator_version_object(pkg, "ns")
    operator = records.operator_object(pkg, "ns")
    instance = records.instance_object(pkg, "shop", "ns", {"replicas": 2}, runner="cli")

    labels = {"kplan.dev/operator": "cli-app"}
    assert version["metadata"] == {"name": "cli-app-0.1.0", "namespace": "ns", "labels": labels}
    assert version["spec"]["files"] == loader.read_files(APP)
    assert loader.from_files(version["spec"]["files"]).version_name == "cli-app-0.1.0"
    assert version["spec"]["appVersion"] == "1.0"
    assert operator["metadata"]["name"] == "cli-app"
    assert instance["metadata"]["annotations"] == {"kplan.dev/runner": "cli"}
    assert instance["spec"] == {"operatorVersion": {"name": "cli-app-0.1.0"}, "parameters": {"replicas": 2}}
    assert "annotations" not in records.instance_object(pkg, "shop", "ns", {})["metadata"]
