"""Rules on plans: the deploy plan, names, the tasks steps run, and the step graph (dependsOn)."""

from __future__ import annotations

from collections.abc import Iterator

from engine import graph
from engine.errors import Problem
from engine.package.build import build_plan
from engine.package.rules.common import bad_names, dns_label_problem, duplicate_names
from engine.package.source import line_of
from engine.package.walk import OPERATOR_FILE, Docs, Node, plans, steps, tasks

__all__ = ["cycles", "deploy_plan", "plan_names", "step_dependencies", "step_tasks"]


def deploy_plan(docs: Docs) -> Iterator[Problem]:
    table = docs.operator.get("plans")
    if isinstance(table, dict) and "deploy" not in table:
        message = "is required: it is the plan run on install"
        yield Problem(OPERATOR_FILE, line_of(docs.operator, "plans"), "plans.deploy", message)


def plan_names(docs: Docs) -> Iterator[Problem]:
    """Plan, phase and step names are DNS labels; phase and step names are unique within a plan."""
    for name, plan in plans(docs):
        reason = dns_label_problem(name)
        if reason:
            yield Problem(OPERATOR_FILE, plan.line, plan.path, reason)
        yield from bad_names(plan.children("phases"), dns_label_problem)
        yield from duplicate_names(plan.children("phases"), "phase name")
        yield from bad_names(steps(plan), dns_label_problem)
        yield from duplicate_names(steps(plan), "step name")


def _list_items(step: Node, key: str) -> Iterator[tuple[str, int | None, str]]:
    items = step.value.get(key)
    for i, text in step.strings(key):
        yield f"{step.field(key)}[{i}]", line_of(items, i), text


def step_tasks(docs: Docs) -> Iterator[Problem]:
    declared = {t.text("name") for t in tasks(docs)}
    for _, plan in plans(docs):
        for step in steps(plan):
            for field, line, name in _list_items(step, "tasks"):
                if name not in declared:
                    yield Problem(OPERATOR_FILE, line, field, f"names the task {name!r}, which is not in tasks")


def step_dependencies(docs: Docs) -> Iterator[Problem]:
    for plan_name, plan in plans(docs):
        known = {s.text("name") for s in steps(plan)}
        for step in steps(plan):
            for field, line, name in _list_items(step, "dependsOn"):
                if name not in known:
                    message = f"names the step {name!r}, which is not in plan {plan_name!r}"
                    yield Problem(OPERATOR_FILE, line, field, message)


def cycles(docs: Docs) -> Iterator[Problem]:
    """Steps that wait on each other, through dependsOn and the order of serial phases and steps."""
    for name, plan in plans(docs):
        cycle = graph.find_cycle(build_plan(name, plan))
        if cycle:
            path = " -> ".join([*cycle, cycle[0]])
            yield Problem(OPERATOR_FILE, plan.line, plan.path, f"has a dependency cycle: {path}")
