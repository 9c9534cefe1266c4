"""Checking plain scalars as a template renders (`engine.render.plainscalars`) never lets the fast YAML path take
what PyYAML reads otherwise: generated templates whose constant text and `{{ }}` values are full of the scalars YAML
1.1 and 1.2 read apart, in every position (keys, values, flow collections, quotes, joined to each other), render to
exactly what PyYAML reads from the same text; and the usual templates are found checked."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import RenderError
from engine.render import plainscalars
from engine.render.documents import parse_objects, pyyaml_objects
from engine.render.limits import DEFAULT_LIMITS, Budget
from engine.render.rendering import _render_checked
from engine.render.sandbox import WRITERS, environment

HEAD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n"
TOKENS = ["yes", "No", "on", "OFF", "y", "true", "False", "~", "null", "Null", "", "0777", "0o17", "0x1F", "0b101",
          "1_000", "1e3", "1.0e3", "1.5e-3", ".5", "1.", "-.inf", ".NaN", "1:20", "12:30:00", "2024-01-01", "=", "<<",
          "-1", "+1", "0", "3", "1.25", "a b", "it's", "x: y", "x:", ":", "#c", "- z", "[q]", "{a: 1}", "é☺",
          "nginx:1.27", "side", "data", "key-1", "1", "20", ":20", "e3", "nu", "ll", "ye", "s", '"', "\\", "\n",
          " ", ",", "]", "a\n"]
# Constant text around and between values: separators, quotes, keys, flow collections, and tokens themselves.
GLUE = ["", " ", "\n  ", ": ", ":", '"', "'", ", ", "[", "]", "{", "}", "- ", "-", "x", "1", "0", ".", "e", "n",
        "\n  k: ", "\n  - ", "\n  ", "#"]


@st.composite
def templates(draw: st.DrawFn) -> tuple[str, dict[str, str]]:
    """A template of lines under `data:`, each of constants and values, and the values it renders."""
    values: dict[str, str] = {}
    lines = []
    for line in range(draw(st.integers(1, 4))):
        parts = ["  "]
        for at in range(draw(st.integers(1, 4))):
            if draw(st.booleans()):
                name = f"v{line}_{at}"
                values[name] = draw(st.sampled_from(TOKENS))
                parts.append("{{ " + name + " }}")
            else:
                parts.append(draw(st.sampled_from(TOKENS + GLUE)).replace("{", "{ ").replace("#", "# "))
            parts.append(draw(st.sampled_from(GLUE)))
        lines.append("".join(parts))
    return HEAD + "\n".join(lines) + "\n", values


def outcome(text: str, checked: bool) -> Any:
    try:
        return repr(parse_objects(text, "t.yaml", Budget(DEFAULT_LIMITS), checked=checked))
    except RenderError as exc:
        return f"error: {exc.reason}"


def reference(text: str) -> Any:
    try:
        return repr(pyyaml_objects(text, "t.yaml", Budget(DEFAULT_LIMITS)))
    except RenderError as exc:
        return f"error: {exc.reason}"


def rendered(source: str, values: dict[str, str]) -> tuple[str, bool]:
    env = environment(templates={"t.yaml": source})
    return _render_checked(env, "t.yaml", values)


@settings(max_examples=1500, deadline=None)
@given(templates())
def test_a_checked_render_reads_as_pyyaml_reads_it(template: tuple[str, dict[str, str]]) -> None:
    source, values = template
    try:
        text, checked = rendered(source, values)
    except RenderError:
        return  # not a template (a `{` glued into a tag): nothing to parse
    assert outcome(text, checked) == reference(text)


@pytest.mark.parametrize("source, values", [
    ("  a: {{ v }}\n", {"v": "yes"}),
    ("  a: {{ v }}\n", {"v": "1:20"}),
    ("  a: {{ v }}\n", {"v": "1e3"}),
    ("  a: {{ v }}\n", {"v": "0777"}),
    ("  .NaN: 1\n  {{ v }}: 2\n", {"v": ".NaN"}),
    ("  a: 0777\n  b: {{ v }}\n", {"v": "x"}),
    ("  {{ v }}: 1\n", {"v": "~"}),
    ("  {{ v }}: 1\n", {"v": "a\n"}),
    ("  {{ v }}: 1\n", {"v": "[a, b]"}),
    ("  a: 1{{ v }}20\n", {"v": ":"}),
    ("  a: {{ v }}{{ w }}\n", {"v": "1", "w": ":20"}),
    ("  a: {{ v }}e3\n", {"v": "1"}),
    ("  a: {{ v }}-{{ w }}\n", {"v": "1", "w": "2"}),
    ("  {{ v }}: 1\n", {"v": ""}),
    ("  a: 1{{ v }}:20\n", {"v": ""}),
    ("  a: {{ v }}\n", {"v": "[1, on]"}),
    ('  a: "{{ v }}"\n', {"v": '" x: "yes'}),
    ("  a: y{% if true %}es{% endif %}\n", {}),
    ("  a: 1{% for x in [1] %}:20{% endfor %}\n", {}),
    ("  a: {% include 'b.yaml' %}\n", {}),
])
def test_what_reads_otherwise_is_not_checked(source: str, values: dict[str, str]) -> None:
    env = environment(templates={"t.yaml": HEAD + source, "b.yaml": "yes"})
    text, checked = _render_checked(env, "t.yaml", values)
    assert not checked
    assert outcome(text, checked) == reference(text)


@pytest.mark.parametrize("source, values", [
    ("  a: {{ v }}\n  b: {{ w | quote }}\n", {"v": "nginx:1.27", "w": "yes"}),
    ('  replicas: "{{ v }}"\n  port: {{ w }}\n', {"v": "3", "w": "8080"}),
    ("  {{ k }}: {{ v }}\n", {"k": "key-1", "v": "side"}),
    ("  name: {{ v }}-settings\n  list: [{{ v }}, b]\n", {"v": "web"}),
    ("  memory: {{ v }}Mi\n  cpu: g{{ w }}\n  empty: {{ e }}\n", {"v": "512", "w": "1", "e": ""}),
])
def test_usual_templates_are_checked(source: str, values: dict[str, str]) -> None:
    env = environment(templates={"t.yaml": HEAD + source})
    text, checked = _render_checked(env, "t.yaml", values)
    assert checked
    assert outcome(text, checked) == reference(text)


def test_no_scalar_with_a_character_outside_suspect_reads_as_other_than_a_string() -> None:
    """The premise of `SUSPECT`: every token that either library reads otherwise than a string is spelt with it."""
    for token in TOKENS:
        if token and not plainscalars.SUSPECT.issuperset(token):
            assert plainscalars.segment_alike(token)
    for word in ["yes", "on", "null", "~", ".inf", "1e3", "0x1F", "0o17", "1:20", "<<", "=", "True"]:
        assert plainscalars.SUSPECT.issuperset(word)


def test_a_compiled_template_binds_the_writers_of_the_slots_it_outputs_in_and_no_other() -> None:
    env = environment(templates={"t.yaml": HEAD + "  a: {{ v }}\n  b: x{{ w }}\n  c: \"{{ v }}\"\n"})
    module = env.get_template("t.yaml").root_render_func.__globals__
    bound = {name: slot for slot, name in WRITERS.items() if name in module}
    assert bound == {WRITERS["both"]: "both", WRITERS["right"]: "right", WRITERS['"']: '"'}
    assert all(module[name] is env.writers[slot] for name, slot in bound.items())
    assert _render_checked(env, "t.yaml", {"v": "1.5", "w": "y"})[0] == HEAD + "  a: 1.5\n  b: xy\n  c: \"1.5\"\n"


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=sorted(plainscalars.SUSPECT), min_size=1, max_size=12)
       | st.from_regex(r"\A[-+]?[0-9]{1,22}\Z") | st.from_regex(r"\A[-~=<.sSyYnN]?[0-9]{1,3}[a-zA-Z]{0,3}\Z")
       | st.from_regex(r"\A[-+.]?[0-9]{1,3}[.eExXoObB_:]?[0-9a-fA-F]{0,3}([eE][-+]?[0-9]{1,2})?\Z"))
def test_segments_known_alike_without_reading_them_are_the_ones_that_read_alike(segment: str) -> None:
    if plainscalars._PLAIN_ALIKE.fullmatch(segment):
        assert plainscalars._reads_alike(segment)
