"""The planner's memo of whole plans' renders: a pass over an unchanged plan reads the render of the pass before
(nothing rendered, nothing copied); other values, pipe outputs, owners or another package render again."""

from __future__ import annotations

from planner_harness import package, phase, plan, simple_package, step

from engine.planner import rendering
from engine.planner.stamping import Owner

OWNER = Owner("c", "shop", "uid-1", "redis")


def rendered(pkg, values=None, pipes=None, owner=OWNER):  # type: ignore[no-untyped-def]
    scene = rendering.Scene(owner, values if values is not None else {"value": "x"}, pipes or {})
    return rendering.render_plan(pkg, pkg.plan("deploy"), scene)


def test_a_pass_over_an_unchanged_plan_renders_nothing() -> None:
    pkg = simple_package("a", "b")
    first = rendered(pkg)
    misses, hits = rendering.RENDERED.misses, rendering.RENDERED.hits

    again = rendered(pkg, {"value": "x"})

    assert again is first
    assert (rendering.RENDERED.misses, rendering.RENDERED.hits) == (misses, hits)
    assert first[("a", "a")].objects[0]["data"] == {"value": "x"}


def test_other_values_pipes_or_owner_render_again() -> None:
    pkg = simple_package("a")
    first = rendered(pkg)

    assert rendered(pkg, {"value": "y"})[("a", "a")].objects[0]["data"] == {"value": "y"}
    assert rendered(pkg, pipes={"p": {"k": "v"}}) is not first
    assert rendered(pkg, owner=Owner("d", "shop", "uid-2", "redis")) is not first
    assert rendered(pkg) is first


def test_another_package_of_the_same_name_and_version_renders_its_own_plan() -> None:
    first = simple_package("a")
    other = package(first.templates, first.tasks, [plan("deploy", phase("main", step("a"), step("b", "a")))])
    rendered(first)

    assert sorted(rendered(other)) == [("a", "a"), ("b", "a")]
