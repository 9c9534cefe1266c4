"""Golden renders of the packages shipped under operators/, and the checks every one of them must pass.

For every plan of every package, `kplan template operators/PKG --plan PLAN` with the default parameters (plus
`tests/unit/golden/PKG/params.yaml` for parameters that have no default) must equal the checked-in
`tests/unit/golden/PKG/PLAN.yaml`, and be a YAML stream of Kubernetes objects. Every package verifies without
problems or warnings, and each README's mermaid pictures (a ```mermaid block after `<!-- plan: NAME -->`) are
what `kplan plan graph PKG --plan NAME -o mermaid` prints now.

After an intended change, regenerate the golden files and review their diff before committing:

    KPLAN_UPDATE_GOLDEN=1 .venv/bin/pytest tests/unit/test_operators_golden.py
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.cli.main import main
from engine.package import loader

ROOT = Path(__file__).resolve().parents[2]
OPERATORS = ROOT / "operators"
GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("KPLAN_UPDATE_GOLDEN") == "1"
PACKAGES = sorted(p.name for p in OPERATORS.iterdir() if (p / "operator.yaml").is_file())
PLANS = [(name, plan) for name in PACKAGES for plan in sorted(loader.load(str(OPERATORS / name)).plans)]
# The packages of the data-service operators: each README shows its plans as `kplan plan graph` draws them.
DATA_SERVICES = ("airflow", "elastic", "etcd", "mysql", "redis")
PICTURE = re.compile(r"<!-- plan: ([a-z0-9-]+) -->\n```mermaid\n(.*?)```", re.S)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    captured = capsys.readouterr()
    assert code == 0, f"kplan {' '.join(argv)} exited {code}: {captured.err}"
    return captured.out


def template(capsys: pytest.CaptureFixture[str], package: str, plan: str) -> str:
    values = GOLDEN / package / "params.yaml"
    given = ["-P", str(values)] if values.is_file() else []
    return cli(capsys, "template", str(OPERATORS / package), "--plan", plan, *given)


def test_every_shipped_package_is_covered() -> None:
    assert set(DATA_SERVICES) <= set(PACKAGES)
    expected = {f"{name}/{plan}.yaml" for name, plan in PLANS}
    found = {p.relative_to(GOLDEN).as_posix() for p in GOLDEN.glob("*/*.yaml") if p.name != "params.yaml"}
    assert found - expected == set(), "golden files of plans or packages that no longer exist"


@pytest.mark.parametrize(("package", "plan"), PLANS, ids=[f"{n}-{p}" for n, p in PLANS])
def test_render_matches_the_golden_file(package: str, plan: str, capsys: pytest.CaptureFixture[str]) -> None:
    rendered = template(capsys, package, plan)
    golden = GOLDEN / package / f"{plan}.yaml"
    if UPDATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(rendered)
    assert golden.is_file(), f"no golden file {golden.relative_to(ROOT)}: run with KPLAN_UPDATE_GOLDEN=1"
    assert rendered == golden.read_text(), f"{package} {plan} renders differently; see the module docstring"


@pytest.mark.parametrize(("package", "plan"), PLANS, ids=[f"{n}-{p}" for n, p in PLANS])
def test_render_is_a_stream_of_kubernetes_objects(package: str, plan: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    documents: list[Any] = list(yaml.safe_load_all(template(capsys, package, plan)))

    assert documents
    for doc in documents:
        assert isinstance(doc, dict) and doc["apiVersion"] and doc["kind"], doc
        assert re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", doc["metadata"]["name"]), doc["metadata"]
        assert doc["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "kplan"
        assert doc["metadata"]["annotations"]["kplan.dev/plan"] == plan


@pytest.mark.parametrize("package", PACKAGES)
def test_package_verifies_without_problems(package: str) -> None:
    _, problems = loader.load_with_warnings(str(OPERATORS / package))

    assert [str(p) for p in problems] == []


@pytest.mark.parametrize("package", DATA_SERVICES)
def test_readme_pictures_are_the_current_plan_graphs(package: str, capsys: pytest.CaptureFixture[str]) -> None:
    readme = (OPERATORS / package / "README.md").read_text()
    pictures = dict(PICTURE.findall(readme))

    assert "deploy" in pictures, f"operators/{package}/README.md has no picture of the deploy plan"
    assert set(pictures) <= set(loader.load(str(OPERATORS / package)).plans)
    for plan, picture in pictures.items():
        drawn = cli(capsys, "plan", "graph", str(OPERATORS / package), "--plan", plan, "-o", "mermaid")
        assert picture.rstrip() == drawn.rstrip(), f"operators/{package}/README.md: the {plan} picture is stale"


@pytest.mark.parametrize("package", ["airflow", "mysql"])
def test_secret_parameters_are_rendered_hidden(package: str, capsys: pytest.CaptureFixture[str]) -> None:
    given = yaml.safe_load((GOLDEN / package / "params.yaml").read_text())
    pkg = loader.load(str(OPERATORS / package))
    secrets = [str(given[p.name]) for p in pkg.parameters if p.secret]

    rendered = "".join(template(capsys, package, plan) for plan in sorted(pkg.plans))

    assert secrets and [s for s in secrets if s in rendered] == []
    assert "KioqKio=" in rendered  # base64 of the ***** that stands for each of them
