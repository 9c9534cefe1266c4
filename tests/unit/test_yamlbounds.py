"""Bounded YAML: alias bombs, self-referring aliases and deep nesting are refused with the file and line,
in package files, -P parameter files, test files and rendered output (regressions of issue 12)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine import yamlbounds
from engine.cli.main import main
from engine.testing.loading import TestsInvalid, parse_documents

MINIMAL = Path(__file__).parent.parent / "fixtures" / "packages" / "minimal"

# ~0.5 KB standing for 9**9 (387 million) strings.
BOMB = "".join(
    f"  {name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True)
)
BOMB = '  a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + BOMB


def _package(tmp_path: Path) -> Path:
    folder = tmp_path / "pkg"
    shutil.copytree(MINIMAL, folder)
    return folder


def _bomb_default(folder: Path) -> None:
    params = (folder / "params.yaml").read_text(encoding="utf-8")
    lines = "".join("    " + line + "\n" for line in BOMB.splitlines())
    (folder / "params.yaml").write_text(
        params + "  - name: lol\n    type: object\n    default:\n" + lines, encoding="utf-8"
    )


def test_an_alias_bomb_is_refused_before_it_is_built() -> None:
    with pytest.raises(yamlbounds.OutOfBounds, match="alias bomb") as caught:
        yamlbounds.load(BOMB)
    assert caught.value.problem_mark is not None


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    with pytest.raises(yamlbounds.OutOfBounds, match="refers to a node containing it"):
        yamlbounds.load("a: &a [1, *a]\n")


def test_nesting_is_bounded() -> None:
    depth = yamlbounds.MAX_DEPTH
    assert yamlbounds.load("[" * depth + "]" * depth) is not None
    with pytest.raises(yamlbounds.OutOfBounds, match=f"nests deeper than {depth} levels"):
        yamlbounds.load("[" * (depth + 1) + "]" * (depth + 1))


def test_ordinary_aliases_and_large_plain_files_load() -> None:
    text = "base: &base {a: 1, b: [1, 2]}\none: {<<: *base, c: 3}\ntwo: *base\n"
    assert yamlbounds.load(text)["one"] == {"a": 1, "b": [1, 2], "c": 3}
    many = "[" + "0," * (yamlbounds.MAX_ALIAS_NODES + 20_000) + "]"  # more values than aliases may add
    assert len(yamlbounds.load(many)) == yamlbounds.MAX_ALIAS_NODES + 20_000


def test_verify_and_template_refuse_a_bomb_as_a_parameter_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _package(tmp_path)
    _bomb_default(folder)
    assert main(["package", "verify", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "params.yaml:" in out and "alias bomb" in out
    assert main(["template", str(folder)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: package is invalid: params.yaml:") and err.count("\n") == 1


def test_a_parameter_file_bomb_is_refused_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    values = tmp_path / "values.yaml"
    values.write_text("replicas: 2\nlol:\n" + BOMB, encoding="utf-8")
    assert main(["template", str(MINIMAL), "-P", str(values)]) == 1
    assert capsys.readouterr().err == f"error: parameter file {values} has aliases that expand to more than " \
        f"{yamlbounds.MAX_ALIAS_NODES} values (an alias bomb?)\n"


def test_a_test_file_bomb_is_refused_naming_the_file() -> None:
    with pytest.raises(TestsInvalid, match=r"tests/a/00-assert\.yaml:\d+: .*alias bomb"):
        parse_documents("kind: X\nlol:\n" + BOMB, "tests/a/00-assert.yaml")


def test_a_template_rendering_deep_nesting_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _package(tmp_path)
    (folder / "templates" / "app.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
        "data: {% for i in range(400) %}{a: {% endfor %}1{% for i in range(400) %}}{% endfor %}\n",
        encoding="utf-8",
    )
    assert main(["template", str(folder)]) == 1
    assert capsys.readouterr().err == (
        f"error: template app.yaml:5: the rendered output nests deeper than {yamlbounds.MAX_DEPTH} levels"
        " (rendered line 5)\n"
    )


def test_the_deepest_allowed_output_prints(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _package(tmp_path)
    depth = yamlbounds.MAX_DEPTH - 2  # the object and its data field are two levels
    (folder / "templates" / "app.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
        f"data: {{% for i in range({depth}) %}}{{a: {{% endfor %}}1{{% for i in range({depth}) %}}}}{{% endfor %}}\n",
        encoding="utf-8",
    )
    for output in ("yaml", "json"):
        assert main(["template", str(folder), "-o", output]) == 0
        assert capsys.readouterr().out.count("a") >= depth
