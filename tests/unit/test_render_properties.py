"""Property tests of rendering: whatever text a package holds, check_template, referenced_params and
render_template raise nothing but RenderError, and rendering is deterministic."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from render_helpers import SMALL, context, package

from engine.errors import RenderError
from engine.render import check_template, referenced_params, render_template

PARAMS = {"replicas": 3, "name": "x", "labels": {"a": "b"}, "nodes": [1, 2]}

# Fragments that make random text more likely to reach the template engine's corners.
FRAGMENTS = st.sampled_from(
    [
        "{{", "}}", "{%", "%}", "{#", "#}", "Params.", "Params.replicas", "Params['labels']", "Name", "|", "~",
        " for x in ", " in range(3) ", "endfor", " if ", "endif", " set ", "=", "(", ")", "[", "]", ":", "-",
        "---\n", "\n", "  ", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n", "toyaml", "tojson",
        "required('x')", "b64decode", "semver_compare('>1')", "include 'other.yaml'", "macro m()", "endmacro",
        "loop.index", "* 10**9", "__class__", "'a'", "1", "None", "{}", "&a", "*a", "!!binary", "\t", "\x00",
    ]
)
MIXED = st.lists(st.one_of(FRAGMENTS, st.text(max_size=5)), max_size=30).map("".join)
SOURCES = st.one_of(st.text(max_size=200), MIXED)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SOURCES)
def test_check_template_returns_none_or_a_render_error(source: str) -> None:
    result = check_template("t.yaml", source)
    assert result is None or (isinstance(result, RenderError) and result.file == "t.yaml")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SOURCES)
def test_referenced_params_never_raises(source: str) -> None:
    assert all(isinstance(name, str) for name in referenced_params(source))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SOURCES)
def test_render_template_raises_only_render_errors(source: str) -> None:
    pkg = package({"t.yaml": source, "other.yaml": "a: {{ Name }}\n"})
    try:
        first = render_template(pkg, "t.yaml", context(PARAMS), limits=SMALL)
    except RenderError as error:
        assert error.file in {"t.yaml", "other.yaml"}
        assert str(error).startswith("template ")
        return
    assert all(isinstance(obj, dict) and obj["metadata"]["name"] for obj in first)
    assert render_template(pkg, "t.yaml", context(PARAMS), limits=SMALL) == first
