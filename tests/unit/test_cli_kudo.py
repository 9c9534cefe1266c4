"""`kplan package convert --from kudo`, and KUDO packages given where kplan takes a package.

Convert writes a package that verifies and prints every note; a folder that is not a KUDO package, or
a destination that is not empty, is refused in one sentence. `template` and `package verify` accept the
KUDO package itself (converted in memory, with a one-line notice on stderr), and `template` of a
parent finds its KudoOperator children in `--kudo-repo`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from engine.cli.main import main
from engine.package import loader

KUDO = Path(__file__).parent.parent / "fixtures" / "kudo"
SHOP = str(KUDO / "shop")


def test_convert_writes_a_kplan_package_and_prints_its_notes(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    dest = tmp_path / "shop"
    assert main(["package", "convert", "--from", "kudo", SHOP, str(dest)]) == 0
    out = capsys.readouterr().out.splitlines()

    assert out[-1] == f"converted {SHOP} into {dest} (3 notes, 0 untranslated constructs)"
    assert "operator.yaml:4: kudoVersion has no kplan equivalent and is dropped" in out
    pkg = loader.load(str(dest))
    assert [(t.name, t.kind.value) for t in pkg.tasks] == [
        ("generate", "Pipe"), ("generate-artifacts", "Apply"), ("config", "Apply"), ("app", "Apply"),
        ("extra", "Apply")]
    assert [s.name for s in pkg.plans["deploy"].phases[0].steps] == [
        "generate", "generate-artifacts", "config", "app", "extra"]
    assert yaml.safe_load((dest / "operator.yaml").read_text())["apiVersion"] == "kplan.dev/v1alpha1"


def test_convert_refuses_a_kplan_package_and_a_folder_in_use(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    valid = str(Path(__file__).parent.parent / "fixtures" / "packages" / "valid")
    assert main(["package", "convert", "--from", "kudo", valid, str(tmp_path / "x")]) == 1
    assert capsys.readouterr().err.startswith(f"error: {valid} is not a KUDO package")
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "file").write_text("x")
    assert main(["package", "convert", "--from", "kudo", SHOP, str(tmp_path / "used")]) == 1
    assert "is not empty" in capsys.readouterr().err


def test_template_and_verify_take_a_kudo_package_with_a_notice(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["template", SHOP, "--instance", "store", "-p", "REPLICAS=2"]) == 0
    captured = capsys.readouterr()
    docs = list(yaml.safe_load_all(captured.out))

    assert captured.err.splitlines() == [f"note: {SHOP} is a KUDO package, converted in memory (3 notes; "
                                          "`kplan package convert --from kudo` writes it out with them)"]
    config = next(d for d in docs if d["metadata"]["name"] == "store-config")
    assert config["data"]["members"] == "store-0,store-1"
    assert main(["package", "verify", SHOP]) == 0
    assert capsys.readouterr().out == "package shop 0.4.0 is valid\n"


def test_convert_points_kudo_operator_tasks_at_the_versions_in_the_kudo_repository(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    demo, dest = str(KUDO / "repo" / "demo"), tmp_path / "demo"
    assert main(["package", "convert", "--from", "kudo", demo, str(dest), "--kudo-repo", str(KUDO / "repo")]) == 0
    out = capsys.readouterr().out
    tasks = {t.name: t for t in loader.load(str(dest)).tasks}

    assert "task beta asks for beta 0.9.0; the KUDO repository holds 1.0.0, which it installs instead" in out
    assert (tasks["beta"].kind.value, tasks["beta"].package, tasks["beta"].version) == ("Operator", "beta", "1.0.0")
    assert tasks["alpha"].instance_name == "first"
    assert dict(tasks["alpha"].parameters) == {"GREETING": "hi from the demo", "SIZE": "2"}
    assert "Params.SIZE" in tasks["beta"].parameters["SIZE"]  # a templated parameterFile value stays templated
