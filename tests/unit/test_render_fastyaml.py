"""The fast YAML path (yaml-rs) reads exactly what PyYAML reads, or declines: generated documents full of the
scalars YAML 1.1 and 1.2 read apart, every shipped package's rendered manifests, and each feature left to PyYAML."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import params, render
from engine.cli.template import placeholder_pipes
from engine.errors import RenderError
from engine.package import loader
from engine.render import fastyaml
from engine.render.context import template_variables
from engine.render.documents import parse_objects, pyyaml_objects
from engine.render.limits import DEFAULT_LIMITS, Budget
from engine.render.rendering import _render_text
from engine.render.sandbox import environment

OPERATORS = Path(__file__).resolve().parents[2] / "operators"
GOLDEN = Path(__file__).parent / "golden"
HEAD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
TOKENS = ["yes", "No", "on", "OFF", "y", "true", "False", "~", "null", "", "0777", "0o17", "0x1F", "0b101", "1_000",
          "1e3", "1.0e3", "1.5e-3", ".5", "1.", "-.inf", ".NaN", "1:20", "12:30:00", "2024-01-01", "=", "<<", "-1",
          "+1", "0", "00", "3", "1.25", "a b", "it's", "x: y", "#c", "- z", "[q]", "é☺", "nginx:1.27", "10.0.0.1"]


def outcome(parse: Any, text: str) -> list[dict[str, Any]] | str:
    try:
        objects: list[dict[str, Any]] = parse(text, "t.yaml", Budget(DEFAULT_LIMITS))
    except RenderError as exc:
        return f"error: {exc}"
    return objects


def reference(text: str) -> list[dict[str, Any]] | str:
    return outcome(pyyaml_objects, text)


def spelt(token: str, style: str) -> str:
    if style == "single":
        return "'" + token.replace("'", "''") + "'"
    if style == "double":
        return json.dumps(token)
    return token


scalars = st.builds(spelt, st.sampled_from(TOKENS), st.sampled_from(["plain", "single", "double"]))
flows = st.lists(scalars, max_size=3).map(lambda items: "[" + ", ".join(items) + "]")


@st.composite
def documents(draw: st.DrawFn) -> str:
    lines = [HEAD.rstrip("\n"), "data:"]
    for i in range(draw(st.integers(1, 6))):
        key = draw(st.one_of(scalars, st.just(f"k{i}")))
        value = draw(st.one_of(scalars, flows))
        lines.append(f"  {key}: {value}")
    return "\n".join(lines) + "\n"


@settings(max_examples=400, deadline=None)
@given(st.lists(documents(), min_size=1, max_size=3))
def test_generated_documents_read_alike_or_the_fast_path_declines(docs: list[str]) -> None:
    text = "---\n".join(docs)
    fast = fastyaml.parse(text)
    if fast is not None:
        assert repr(fast) == repr(reference(text))  # repr: in order, and NaN equals NaN
    assert repr(outcome(parse_objects, text)) == repr(reference(text))


def shipped_renders() -> list[tuple[str, str]]:
    texts = []
    for folder in sorted(p for p in OPERATORS.iterdir() if (p / "operator.yaml").is_file()):
        pkg = loader.load(str(folder))
        given = GOLDEN / folder.name / "params.yaml"
        values = params.resolve(pkg, yaml.safe_load(given.read_text()) if given.is_file() else {})
        ctx = render.RenderContext(instance="t", namespace="n", params=values, pipes=placeholder_pipes(pkg))
        for name in sorted(pkg.templates):
            try:
                texts.append((f"{folder.name}/{name}", _render_text(environment(templates=pkg.templates), name,
                                                                    template_variables(ctx, pkg))))
            except Exception:  # a template that needs a plan's own values; the golden tests cover it
                continue
    return texts


@pytest.mark.parametrize(("name", "text"), shipped_renders())
def test_shipped_manifests_read_alike(name: str, text: str) -> None:
    fast = fastyaml.parse(text)
    if fast is not None:
        assert repr(fast) == repr(reference(text))


def test_a_plain_manifest_takes_the_fast_path() -> None:
    text = HEAD + "data:\n  a: 'hello'\n  t: 'true'\n  n: \"3\"\n  b: \"1\"\n  c: ''\n---\n" + HEAD + "data: {x: y}\n"
    assert fastyaml.parse(text) == reference(text)


@pytest.mark.parametrize("tail", [
    "data: {a: yes}", "data: {a: 0777}", "data: {a: 1e3}", "data: {a: 1:20}", "data: {a: !!str 1}",
    "data: {a: &x b, c: *x}", "data:\n  : x", "data:\n  ? a\n  : b", "data: {[a]: b}", "data: {a: 1, a: 2}",
    "data: {a: =}", "spec: !custom {}", "data: {a: b}\n...", "--- {a: b}", "data: {a: -0777}", "data: [1.5E+3]",
    "data: {1e3: b}", "data: {a: 1.5, b: '1e3'}", "data: {a: '1.5', b: 1.0e3}", "data: {a: [x, -.5e-3]}",
    "data: {.NaN: 1, .nan: 2}",
])
def test_what_the_two_could_read_apart_is_left_to_pyyaml(tail: str) -> None:
    assert fastyaml.parse(HEAD + tail + "\n") is None


def test_an_exponent_where_yaml_rs_read_no_float_takes_the_fast_path() -> None:
    text = HEAD + "data:\n  a: '1e3'\n  b: \"2.5E-3\"\n  c: 1e3x\n  d: 3\n"
    assert fastyaml.parse(text) == reference(text)
    assert fastyaml.parse(text) is not None


def test_duplicate_keys_are_refused_with_their_line() -> None:
    with pytest.raises(RenderError, match=r"t.yaml:7: .*duplicate key 'a' \(rendered line 7\)"):
        parse_objects(HEAD + "data:\n  a: 1\n  a: 2\n", "t.yaml", Budget(DEFAULT_LIMITS))


def test_merge_keys_may_still_be_overridden() -> None:
    text = HEAD + "base: &b {k: 1, l: 0}\ndata:\n  <<: *b\n  l: 2\n"
    assert parse_objects(text, "t.yaml", Budget(DEFAULT_LIMITS))[0]["data"] == {"k": 1, "l": 2}
