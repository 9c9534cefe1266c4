"""Rendering every template of every plan as a check: what `install` would refuse, found before anything runs.

Each template is rendered where a plan uses it (plan, phase, step and task names set), with the parameters'
defaults, a placeholder for each required parameter without one, and a placeholder for each Pipe output.
Every failure is reported (an undefined name, output that is not YAML, a document that is not a Kubernetes
object, ...), once per file, line and reason, at the first place it happens.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, replace
from typing import Any

import yaml

from engine import render
from engine.errors import Problem, RenderError
from engine.model import Package, Parameter, ParamType, Plan, Task, TaskKind
from engine.package.walk import OPERATOR_FILE, TEMPLATES_DIR

__all__ = ["NAMESPACE", "placeholder_pipes", "placeholder_values", "render_problems"]

NAMESPACE = "default"  # where the check renders, as `kplan template` does without -n
MARKUP = ("{{", "{%", "{#")
RESOURCE_KINDS = frozenset({TaskKind.APPLY, TaskKind.DELETE, TaskKind.TOGGLE})


@dataclass(frozen=True)
class Use:
    """One place a plan renders something: a template file, or a templated field of an Operator task."""

    ctx: render.RenderContext
    file: str = ""
    field: str = ""
    source: str = ""


def render_problems(pkg: Package, skip: Collection[str] = ()) -> list[Problem]:
    """Every render failure of `pkg`'s plans (templates in `skip`, paths like `templates/x.yaml`, left out)."""
    values, pipes = placeholder_values(pkg), placeholder_pipes(pkg)
    found: dict[Problem, Use] = {}  # each problem with the first place it happens
    for name, plan in sorted(pkg.plans.items()):
        for use in uses(pkg, plan, render.RenderContext(pkg.name, NAMESPACE, values, plan=name, pipes=pipes)):
            problem = None if TEMPLATES_DIR + use.file in skip else failure(pkg, use)
            if problem is not None and problem.file not in skip:  # met through an include: reported already
                found.setdefault(problem, use)
    return sorted(replace(p, message=f"{p.message} (plan {u.ctx.plan}, step {u.ctx.step})") for p, u in found.items())


def uses(pkg: Package, plan: Plan, base: render.RenderContext) -> Iterator[Use]:
    for phase in plan.phases:
        for step in phase.steps:
            for name in step.tasks:
                task = pkg.task(name)
                ctx = render.RenderContext(base.instance, base.namespace, base.params, plan.name, phase.name,
                                           step.name, task.name, base.pipes)
                yield from task_uses(task, ctx)


def task_uses(task: Task, ctx: render.RenderContext) -> Iterator[Use]:
    if task.kind in RESOURCE_KINDS:
        yield from (Use(ctx, file) for file in task.resources)
    elif task.kind is TaskKind.PIPE and task.pod:
        yield Use(ctx, task.pod)
    elif task.kind is TaskKind.WAIT:
        yield from (Use(ctx, w.resource) for w in task.wait_for if w.resource.endswith((".yaml", ".yml")))
    elif task.kind is TaskKind.OPERATOR:
        fields = {"package": task.package or "", "version": task.version or "", "instanceName": task.instance_name,
                  **{f"parameters.{k}": v for k, v in task.parameters.items()}}
        for field, source in sorted(fields.items()):
            text = source if isinstance(source, str) else yaml.safe_dump(source)
            if any(m in text for m in MARKUP):
                yield Use(ctx, field=f"tasks[{task.name}].spec.{field}", source=text)


def failure(pkg: Package, use: Use) -> Problem | None:
    """The Problem of rendering `use`, or None when it renders."""
    try:
        if use.file:
            render.render_template(pkg, use.file, use.ctx)
        else:
            render.render_string(use.source, use.ctx, use.field, pkg=pkg)
    except RenderError as err:
        if use.file and err.file in pkg.templates:
            return Problem(TEMPLATES_DIR + err.file, err.line, "", f"does not render: {err.reason}")
        return Problem(OPERATOR_FILE, None, use.field, f"does not render: {err.reason}")
    return None


def placeholder_values(pkg: Package) -> dict[str, Any]:
    """Each parameter's default, or a placeholder of its type when it has none."""
    return {p.name: p.default if p.has_default else placeholder(p) for p in pkg.parameters}


def placeholder(param: Parameter) -> Any:
    if param.enum:
        return param.enum[0]
    low = param.minimum if param.minimum is not None else 1
    number = min(low, param.maximum) if param.maximum is not None else low
    by_type: dict[ParamType, Any] = {
        ParamType.STRING: f"placeholder-{param.name}".lower(),
        ParamType.INTEGER: int(number),
        ParamType.NUMBER: number,
        ParamType.BOOLEAN: False,
        ParamType.ARRAY: [],
        ParamType.MAP: {},
    }
    return by_type[param.type]


def placeholder_pipes(pkg: Package) -> dict[str, str]:
    """A placeholder naming the key of each Pipe output (the values Pipe tasks produce while a plan runs)."""
    return {f.key: f"placeholder-pipe-{f.key}".lower() for t in pkg.tasks if t.kind is TaskKind.PIPE for f in t.pipe}
