"""Render templates, tasks and whole plans of a package into stamped Kubernetes objects."""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import replace
from types import TracebackType
from typing import Any

from engine.errors import PlanNotFound, RenderError
from engine.model import Package, Plan, Task, TaskKind
from engine.render.cache import CompiledTemplates
from engine.render.confighash import annotate_config_hashes
from engine.render.context import RenderContext, template_variables, with_location
from engine.render.documents import parse_objects
from engine.render.failures import as_render_error
from engine.render.limits import DEFAULT_LIMITS, Clock, Limits
from engine.render.memo import RenderedTemplates, memo_key, scene_key
from engine.render.sandbox import KplanEnvironment, borrowed_environment
from engine.render.stamping import stamp

__all__ = ["render_plan", "render_plan_tasks", "render_string", "render_task", "render_template"]

_RENDERS_RESOURCES = frozenset({TaskKind.APPLY, TaskKind.DELETE, TaskKind.TOGGLE})


def render_template(
    pkg: Package, file: str, ctx: RenderContext,
    *,
    limits: Limits = DEFAULT_LIMITS,
    clock: Clock = time.monotonic,
    cache: CompiledTemplates | None = None,
    memo: RenderedTemplates | None = None,
) -> list[dict[str, Any]]:
    """The stamped objects of `templates/<file>`, in document order (empty documents dropped); with `memo`,
    a render of the same template with the same values is looked up instead."""
    with _Session(pkg, ctx, limits, clock, cache, memo) as session:
        return session.objects(file, ctx, template_variables(ctx, pkg))


def render_task(
    pkg: Package, task: Task, ctx: RenderContext,
    *,
    limits: Limits = DEFAULT_LIMITS,
    clock: Clock = time.monotonic,
    cache: CompiledTemplates | None = None,
) -> list[dict[str, Any]]:
    """The objects of every template of the task, in order (`resources`, or a Pipe task's `pod`)."""
    ctx = replace(ctx, task=task.name)
    with borrowed_environment(limits, clock, pkg.templates, cache) as env:
        return _render_task(env, pkg, task, ctx, template_variables(ctx, pkg))


def render_plan(
    pkg: Package, plan: str, ctx: RenderContext,
    *,
    limits: Limits = DEFAULT_LIMITS,
    clock: Clock = time.monotonic,
    cache: CompiledTemplates | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """Step name -> the objects its tasks render, for every step of the plan in order.

    All or nothing: the first template that fails raises RenderError. Pod templates that use
    a ConfigMap or Secret rendered by the plan are then annotated with the hash of its data.
    """
    by_task = render_plan_tasks(pkg, plan, ctx, limits=limits, clock=clock, cache=cache)
    return {step: [obj for objects in tasks for obj in objects] for step, tasks in by_task.items()}


def render_plan_tasks(
    pkg: Package, plan: str, ctx: RenderContext,
    *,
    limits: Limits = DEFAULT_LIMITS,
    clock: Clock = time.monotonic,
    cache: CompiledTemplates | None = None,
    memo: RenderedTemplates | None = None,
) -> dict[str, list[list[dict[str, Any]]]]:
    """`render_plan` split by task: step name -> the objects of each of its tasks, in the step's task order
    (an empty list for a task that renders no resources). With `memo`, templates rendered before with the
    same values are looked up instead of rendered, so a plan whose values did not change renders nothing."""
    variables = template_variables(ctx, pkg)
    rendered: dict[str, list[list[dict[str, Any]]]] = {}
    with _Session(pkg, ctx, limits, clock, cache, memo) as session:
        for phase in _plan(pkg, plan).phases:
            for step in phase.steps:
                tasks = rendered.setdefault(step.name, [])
                for task in (_task(pkg, step.name, name) for name in step.tasks):
                    task_ctx = replace(ctx, plan=plan, phase=phase.name, step=step.name, task=task.name)
                    tasks.append(session.task_objects(task, task_ctx, with_location(variables, task_ctx)))
    try:
        annotate_config_hashes(obj for tasks in rendered.values() for objects in tasks for obj in objects)
    except Exception as exc:
        raise as_render_error(exc, "operator.yaml") from exc
    return rendered


def render_string(
    source: str,
    ctx: RenderContext,
    name: str = "<string>",
    *,
    pkg: Package | None = None,
    limits: Limits = DEFAULT_LIMITS,
    clock: Clock = time.monotonic,
    cache: CompiledTemplates | None = None,
) -> str:
    """`source` rendered as text (for Operator-task fields); with `pkg`, OperatorName and
    friends are defined too, and `source` may include the package's templates."""
    with borrowed_environment(limits, clock, {**(pkg.templates if pkg else {}), name: source}, cache) as env:
        return _render_text(env, name, template_variables(ctx, pkg))


class _Session:
    """One call's renders (a context manager): the environment is borrowed on the first template the memo
    does not hold, and given back at the end."""

    def __init__(self, pkg: Package, ctx: RenderContext, limits: Limits, clock: Clock,
                 cache: CompiledTemplates | None, memo: RenderedTemplates | None) -> None:
        self.pkg, self.limits, self.clock, self.cache, self.memo = pkg, limits, clock, cache, memo
        self.scene = scene_key(pkg, ctx, limits) if memo is not None else None
        self._env: KplanEnvironment | None = None
        self._borrowed = ExitStack()

    def __enter__(self) -> _Session:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._borrowed.close()

    @property
    def env(self) -> KplanEnvironment:
        if self._env is None:
            borrowed = borrowed_environment(self.limits, self.clock, self.pkg.templates, self.cache)
            self._env = self._borrowed.enter_context(borrowed)
        return self._env

    def task_objects(self, task: Task, ctx: RenderContext, variables: Mapping[str, Any]) -> list[dict[str, Any]]:
        return [obj for file in _files(task) if file for obj in self.objects(file, ctx, variables)]

    def objects(self, file: str, ctx: RenderContext, variables: Mapping[str, Any]) -> list[dict[str, Any]]:
        if self.memo is None or self.scene is None:
            return _render_objects(self.env, self.pkg, file, ctx, variables)
        key = memo_key(self.scene, self.pkg, file, ctx)
        found = self.memo.get(key)
        if found is None:
            found = _render_objects(self.env, self.pkg, file, ctx, variables)
            self.memo.put(key, found)
        return found


def _files(task: Task) -> tuple[str | None, ...]:
    return task.resources if task.kind in _RENDERS_RESOURCES else (task.pod,) if task.kind is TaskKind.PIPE else ()


def _render_task(
    env: KplanEnvironment, pkg: Package, task: Task, ctx: RenderContext, variables: Mapping[str, Any]
) -> list[dict[str, Any]]:
    return [obj for file in _files(task) if file for obj in _render_objects(env, pkg, file, ctx, variables)]


def _render_objects(
    env: KplanEnvironment, pkg: Package, file: str, ctx: RenderContext, variables: Mapping[str, Any]
) -> list[dict[str, Any]]:
    text, checked = _render_checked(env, file, variables)
    try:
        objects = parse_objects(text, file, env.budget, checked=checked)
        return [
            stamp(
                obj,
                instance=ctx.instance,
                namespace=ctx.namespace,
                operator=pkg.name,
                plan=ctx.plan,
                step=ctx.step,
                instance_uid=ctx.instance_uid,
            )
            for obj in objects
        ]
    except Exception as exc:
        raise as_render_error(exc, file) from exc


def _render_text(env: KplanEnvironment, file: str, variables: Mapping[str, Any]) -> str:
    return _render_checked(env, file, variables)[0]


def _render_checked(env: KplanEnvironment, file: str, variables: Mapping[str, Any]) -> tuple[str, bool]:
    """The template's output, and whether its plain scalars were all found to read alike as it was rendered
    (`plainscalars`)."""
    env.budget.restart()
    env.start_output()
    try:
        cycle = env.include_cycle(file)
        if cycle is not None:
            raise RenderError(cycle.names[0], cycle.line, cycle.reason)
        template = env.get_template(file)
        chunks: list[str] = []
        keep, size, limit = chunks.append, 0, env.budget.limits.max_output
        try:  # what `template.generate` does, without its generator around the template's own
            for chunk in template.root_render_func(template.new_context(dict(variables))):
                size += len(chunk)
                if size > limit:
                    env.budget.check_text(size, "the template output")
                keep(chunk)
        except Exception:
            env.handle_exception()  # raises it again, its frames pointing into the template
        return "".join(chunks), env.scalars_checked(template)
    except Exception as exc:
        raise as_render_error(exc, file) from exc


def _plan(pkg: Package, name: str) -> Plan:
    try:
        return pkg.plan(name)
    except PlanNotFound as exc:
        raise RenderError("operator.yaml", None, str(exc)) from exc


def _task(pkg: Package, step: str, name: str) -> Task:
    try:
        return pkg.task(name)
    except KeyError:
        raise RenderError("operator.yaml", None, f"step {step!r} names a task {name!r} that does not exist") from None
