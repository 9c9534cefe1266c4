"""The memo of rendered templates: a plan rendered again with the same values renders nothing and gives the
same objects; any change of what a template reads (values, their types or order, names, an included template,
limits) renders again; failed renders are never kept; what a caller gets is its own copy."""

from __future__ import annotations

from dataclasses import replace

import pytest
from render_helpers import SMALL, apply, configmap, context, package, serial_plan

from engine.errors import RenderError
from engine.render import Limits, RenderedTemplates, render_plan_tasks, render_template

VALUES = configmap("cfg", "data:\n  v: '{{ Params.v }}'\n  keys: '{% for k in Params %}{{ k }} {% endfor %}'")
PLAN = serial_plan("deploy", ("a", ("ta",)), ("b", ("tb",)))


def pkg(templates: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    sources = templates or {"a.yaml": VALUES, "b.yaml": configmap("b-{{ StepName }}")}
    return package(sources, tasks=(apply("ta", "a.yaml"), apply("tb", "b.yaml")), plans={"deploy": PLAN})


def test_a_second_pass_renders_nothing_and_gives_the_same_objects() -> None:
    memo = RenderedTemplates()
    first = render_plan_tasks(pkg(), "deploy", context({"v": 1}), limits=SMALL, memo=memo)
    assert (memo.hits, memo.misses, len(memo)) == (0, 2, 2)
    again = render_plan_tasks(pkg(), "deploy", context({"v": 1}), limits=SMALL, memo=memo)
    assert (memo.hits, memo.misses) == (2, 2)
    assert again == first == render_plan_tasks(pkg(), "deploy", context({"v": 1}), limits=SMALL)


@pytest.mark.parametrize("changed", [
    {"params": {"v": 2}}, {"params": {"v": True}}, {"params": {"v": 1.0}}, {"params": {"v": [1]}},
    {"params": {"v": 1, "w": 0}}, {"instance": "other"}, {"namespace": "other"}, {"instance_uid": "uid-2"},
])
def test_a_change_of_what_a_template_reads_renders_again(changed: dict[str, object]) -> None:
    memo = RenderedTemplates()
    render_plan_tasks(pkg(), "deploy", context({"v": 1}), limits=SMALL, memo=memo)
    ctx = replace(context({"v": 1}), **changed)
    got = render_plan_tasks(pkg(), "deploy", ctx, limits=SMALL, memo=memo)
    assert got == render_plan_tasks(pkg(), "deploy", ctx, limits=SMALL)
    assert memo.misses == 4


def test_the_order_of_a_mapping_is_part_of_the_key() -> None:
    memo = RenderedTemplates()
    one = render_plan_tasks(pkg(), "deploy", context({"v": 1, "w": 2}), limits=SMALL, memo=memo)
    two = render_plan_tasks(pkg(), "deploy", context({"w": 2, "v": 1}), limits=SMALL, memo=memo)
    assert (one["a"][0][0]["data"]["keys"], two["a"][0][0]["data"]["keys"]) == ("v w ", "w v ")


def test_an_included_template_and_the_limits_are_part_of_the_key() -> None:
    memo = RenderedTemplates()
    templates = {"a.yaml": configmap("a", "data:\n  part: '{% include \"part.txt\" %}'"), "b.yaml": configmap("b"),
                 "part.txt": "one"}
    render_plan_tasks(pkg(templates), "deploy", context(), limits=SMALL, memo=memo)
    changed = render_plan_tasks(pkg({**templates, "part.txt": "two"}), "deploy", context(), limits=SMALL, memo=memo)
    assert changed["a"][0][0]["data"]["part"] == "two"
    render_plan_tasks(pkg(templates), "deploy", context(), limits=replace(SMALL, max_items=10), memo=memo)
    assert memo.hits == 0
    render_plan_tasks(pkg(templates), "deploy", context(), limits=SMALL, memo=memo)
    assert memo.hits == 2


def test_a_failed_render_is_not_kept() -> None:
    memo = RenderedTemplates()
    with pytest.raises(RenderError):
        render_plan_tasks(pkg(), "deploy", context({}), limits=SMALL, memo=memo)
    with pytest.raises(RenderError, match="'Params' has no attribute 'v'"):
        render_plan_tasks(pkg(), "deploy", context({}), limits=SMALL, memo=memo)
    assert len(memo) == 0


def test_what_a_caller_gets_is_its_own_copy() -> None:
    memo = RenderedTemplates()
    first = render_template(pkg(), "a.yaml", context({"v": 1}), limits=SMALL, memo=memo)
    first[0]["data"]["v"] = "changed"
    first[0]["metadata"]["labels"].clear()
    again = render_template(pkg(), "a.yaml", context({"v": 1}), limits=SMALL, memo=memo)
    assert memo.hits == 1
    assert again == render_template(pkg(), "a.yaml", context({"v": 1}), limits=SMALL)


def test_values_that_are_not_plain_data_are_rendered_every_time() -> None:
    memo = RenderedTemplates()
    for _ in range(2):
        render_template(pkg(), "a.yaml", context({"v": object()}), limits=SMALL, memo=memo)
    assert (memo.hits, len(memo)) == (0, 0)


def test_the_memo_is_bounded() -> None:
    memo = RenderedTemplates(capacity=3)
    for v in range(5):
        render_template(pkg(), "a.yaml", context({"v": v}), limits=Limits(), memo=memo)
    assert len(memo) == 3
