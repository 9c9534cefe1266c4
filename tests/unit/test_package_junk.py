"""Junk in operator.yaml or params.yaml (random YAML, text, bytes) only ever raises KplanError subclasses."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import KplanError, PackageInvalid
from engine.package import files, loader, verify

FIXTURES = Path(__file__).parent.parent / "fixtures" / "packages"
MINIMAL = loader.read_files(str(FIXTURES / "minimal"))
KEYS = ["apiVersion", "name", "operatorVersion", "tasks", "plans", "deploy", "phases", "steps", "spec", "kind",
        "resources", "parameters", "default", "type", "enum", "dependsOn", "health", "healthy", "trigger", "for",
        "pipe", "pod", "minimum", "pattern", "upgradableFrom", "kplanVersion", "timeout", "strategy"]
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=12),
    st.sampled_from(["Apply", "Toggle", "Pipe", "Wait", "Operator", "app.yaml", "deploy", "0.1.0", "1.x", "[", "{{"]),
)
KEYED = st.one_of(st.sampled_from(KEYS), st.text(max_size=8), st.integers(), st.booleans())
VALUES: st.SearchStrategy[Any] = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYED, inner, max_size=5)),
    max_leaves=30,
)
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(texts: dict[str, str]) -> None:
    """Verification and loading either succeed or raise a KplanError; nothing else escapes."""
    pkg, problems = verify.verify(texts, "junk")
    assert (pkg is None) == any(not p.warning for p in problems)
    for problem in problems:
        assert str(problem)
    try:
        loader.from_files(texts, "junk")
    except PackageInvalid as e:
        assert e.problems
    except KplanError:
        pass


@SETTINGS
@given(VALUES)
def test_random_yaml_as_operator_yaml(document: Any) -> None:
    check(MINIMAL | {"operator.yaml": yaml.safe_dump(document)})


@SETTINGS
@given(VALUES)
def test_random_yaml_as_params_yaml(document: Any) -> None:
    check(MINIMAL | {"params.yaml": yaml.safe_dump(document)})


@SETTINGS
@given(st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=8))
def test_random_fields_in_both_documents(fields: dict[str, Any]) -> None:
    operator = yaml.safe_load(MINIMAL["operator.yaml"]) | fields
    params = yaml.safe_load(MINIMAL["params.yaml"]) | fields
    check(MINIMAL | {"operator.yaml": yaml.safe_dump(operator), "params.yaml": yaml.safe_dump(params)})


@SETTINGS
@given(st.text(max_size=200))
def test_random_text(text: str) -> None:
    check(MINIMAL | {"operator.yaml": text})
    check(MINIMAL | {"params.yaml": text})


@SETTINGS
@given(st.binary(max_size=200))
def test_random_bytes(data: bytes) -> None:
    text = data.decode("latin-1")
    check(MINIMAL | {"operator.yaml": text, "params.yaml": text})


@SETTINGS
@given(st.lists(st.sampled_from(["a:", " b", "- c", "\t", "{", "}", "[", "]", "&x", "*x", "!!binary", "<<:", "? ",
                                  "---", "...", "%YAML 1.1", "|", ">", "'", '"', "#", ":", "\n", "  "]), max_size=30))
def test_random_yaml_tokens(tokens: list[str]) -> None:
    check(MINIMAL | {"operator.yaml": "".join(tokens)})


@SETTINGS
@given(st.binary(max_size=300))
def test_random_bytes_as_an_archive(data: bytes) -> None:
    with contextlib.suppress(KplanError):
        files.read_archive(data, "junk.tgz")


NASTY = [
    "name: !!set {a, b}\n",
    "tasks: !!omap [{a: 1}, {b: 2}]\n",
    "tasks: !!pairs [[a, 1]]\n",
    "tasks: [!!binary aGVsbG8=]\n",
    "plans: {deploy: {phases: [{name: m, steps: [{name: s, tasks: !!set {a}}]}]}}\n",
    "plans: {1: {phases: []}, null: x, true: y}\n",
    "name: 2020-01-01\noperatorVersion: 2020-13-45\n",
    "operatorVersion: 1e999\nname: .inf\n",
    "x: &a [*a]\n",
    "? [a, b]\n: c\n",
    "- &anchor {name: x}\n- *anchor\n",
    "plans: {deploy: {phases: [{name: m, steps: [{name: a, tasks: [app], dependsOn: [a]}]}]}}\n",
    "tasks: [{name: t, kind: Wait, spec: {for: [{resource: 5}], timeout: -1}}]\n",
    "tasks: [{name: t, kind: Pipe, spec: {pod: [x], pipe: [{key: {}}]}}]\n",
    "health: [{kind: X, healthy: {condition: [1], status: 1, jsonPath: {}, equals: []}}]\n",
]


@pytest.mark.parametrize("text", NASTY)
def test_unusual_yaml_in_either_document(text: str) -> None:
    operator = yaml.safe_load(MINIMAL["operator.yaml"])
    check(MINIMAL | {"operator.yaml": text})
    check(MINIMAL | {"params.yaml": text})
    check(MINIMAL | {"operator.yaml": MINIMAL["operator.yaml"] + text if isinstance(operator, dict) else text})
    check(MINIMAL | {"params.yaml": "apiVersion: kplan.dev/v1alpha1\nparameters:\n  - name: p\n    default: " + text})
