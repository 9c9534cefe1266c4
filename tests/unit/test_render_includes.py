"""Templates that include, import or extend themselves: a cycle of literal names taken on every render is refused
before rendering, in one sentence naming the templates and the line; recursion that may end (a tree rendered
by including itself per child) still renders, and what cannot be seen up front still meets the recursion limit."""

from __future__ import annotations

import pytest
from render_helpers import SMALL, configmap, context, package

from engine.errors import RenderError
from engine.render import include_cycles, render_string, render_template


def failure(templates: dict[str, str], file: str) -> RenderError:
    with pytest.raises(RenderError) as caught:
        render_template(package(templates), file, context({"n": 3}), limits=SMALL)
    return caught.value


@pytest.mark.parametrize(
    ("templates", "expected"),
    [
        ({"a.yaml": "x: 1\n{% include 'a.yaml' %}\n"}, "template a.yaml:2: includes itself (a.yaml → a.yaml)"),
        ({"a.yaml": "{% include 'b.yaml' %}", "b.yaml": "{% include 'c.yaml' %}", "c.yaml": "{% include 'a.yaml' %}"},
         "template a.yaml:1: includes itself (a.yaml → b.yaml → c.yaml → a.yaml)"),
        ({"a.yaml": "{% extends 'a.yaml' %}"}, "template a.yaml:1: extends itself (a.yaml → a.yaml)"),
        ({"a.yaml": "{% import 'a.yaml' as m %}"}, "template a.yaml:1: imports itself (a.yaml → a.yaml)"),
        ({"a.yaml": "{% with %}{% from 'b.yaml' import f %}{% endwith %}", "b.yaml": "\n{% include 'a.yaml' %}"},
         "template a.yaml:1: loads itself (a.yaml → b.yaml → a.yaml)"),
    ],
)
def test_a_literal_cycle_is_refused_before_rendering(templates: dict[str, str], expected: str) -> None:
    assert str(failure(templates, "a.yaml")) == expected


def test_a_cycle_reached_through_another_template_is_refused_too() -> None:
    templates = {"app.yaml": configmap("x", "data:\n{% if Params.n %}{% include 'part.yaml' %}{% endif %}"),
                 "part.yaml": "  k: v\n{% include 'part.yaml' %}"}
    error = failure(templates, "app.yaml")
    assert (error.file, error.line, error.reason) == ("part.yaml", 2, "includes itself (part.yaml → part.yaml)")


def test_a_string_that_includes_a_template_of_a_cycle_is_refused() -> None:
    pkg = package({"a.yaml": "{% include 'a.yaml' %}"})
    with pytest.raises(RenderError, match=r"includes itself \(a\.yaml → a\.yaml\)"):
        render_string("{% include 'a.yaml' %}", context(), pkg=pkg)


def test_a_tree_rendered_by_including_itself_per_child_still_renders() -> None:
    node = "{% for x in xs %}({{ x.name }}{% with xs = x.children %}{% include 'tree.txt' %}{% endwith %}){% endfor %}"
    tree = "[{'name': 'a', 'children': [{'name': 'b', 'children': []}, {'name': 'c', 'children': []}]}]"
    pkg = package({"tree.txt": node})
    assert render_string(f"{{% set xs = {tree} %}}{{% include 'tree.txt' %}}", context(), pkg=pkg) == "(a(b)(c))"
    assert include_cycles(pkg.templates) == []


def test_a_self_include_under_a_condition_that_ends_still_renders() -> None:
    source = "{% set n = (n | default(0)) + 1 %}[{{ n }}{% if n < 3 %}{% include 'count.txt' %}{% endif %}]"
    assert render_string(source, context(), name="count.txt", pkg=package({"count.txt": source})) == "[1[2[3]]]"


def test_a_computed_name_still_meets_the_recursion_limit() -> None:
    pkg = package({"a.yaml": "{% include 'a.' ~ 'yaml' %}"})
    with pytest.raises(RenderError) as caught:
        render_template(pkg, "a.yaml", context())
    assert caught.value.reason == "recursion is too deep"


def test_include_cycles_lists_each_cycle_once() -> None:
    templates = {"a.yaml": "{% include 'b.yaml' %}", "b.yaml": "{% include 'a.yaml' %}",
                 "c.yaml": "{% include 'c.yaml' %}", "d.yaml": "{% include 'a.yaml' %}{% include 'missing.yaml' %}",
                 "e.yaml": "{% include 'e.yaml' %"}  # does not parse: the render reports that
    assert [(c.names, c.line, c.reason) for c in include_cycles(templates)] == [
        (("a.yaml", "b.yaml", "a.yaml"), 1, "includes itself (a.yaml → b.yaml → a.yaml)"),
        (("c.yaml", "c.yaml"), 1, "includes itself (c.yaml → c.yaml)"),
    ]
