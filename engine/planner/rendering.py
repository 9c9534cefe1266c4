"""Rendering a whole plan before anything is decided: every task's objects, all or nothing (a RenderError escapes).

`render.render_plan_tasks` renders the plan at once (and annotates pod templates with the hash of the
configuration they use), each task's objects apart. A plan's render is kept too (`PLANS`): a pass over a plan whose
package, values and pipe outputs did not change reads the same render again, which no decision may change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine import render
from engine.errors import RenderError
from engine.model import Package, Plan, Task, TaskKind, WaitFor
from engine.planner import children
from engine.planner.refs import Ref
from engine.planner.stamping import Owner
from engine.render.cache import Lru
from engine.render.memo import scene_key

__all__ = ["Rendered", "Scene", "TaskRender", "render_plan"]

Json = dict[str, Any]

# apiVersions of the kinds a Wait task may name as `kind/name`; other kinds are written `apiVersion/kind/name`.
KNOWN_KINDS = {
    "ConfigMap": "v1", "Secret": "v1", "Service": "v1", "Pod": "v1", "PersistentVolumeClaim": "v1",
    "Namespace": "v1", "ServiceAccount": "v1", "Deployment": "apps/v1", "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1", "ReplicaSet": "apps/v1", "Job": "batch/v1", "CronJob": "batch/v1",
    "Instance": "kplan.dev/v1alpha1", "CustomResourceDefinition": "apiextensions.k8s.io/v1",
}


@dataclass(frozen=True)
class Scene:
    """What a render needs besides the package: whose objects, with which values and pipe outputs."""

    owner: Owner
    values: Mapping[str, Any]
    pipes: Mapping[str, Any]


@dataclass(frozen=True)
class TaskRender:
    """A task's rendered objects (and `refs`, theirs in order); for a Wait task, the (object, condition) pairs it
    waits for instead."""

    objects: tuple[Json, ...] = ()
    waits: tuple[tuple[Ref, str], ...] = ()
    refs: tuple[Ref, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "refs", tuple(Ref.of(obj) for obj in self.objects))  # read by every pass


Rendered = Mapping[tuple[str, str], TaskRender]  # (step, task) -> what the task renders

# Compiled template code and rendered templates, shared by every render of this process: the planner reads the
# whole plan's render on every pass, and a pass over a plan whose values did not change looks every template up
# instead of rendering it. Both are bounded and keyed by everything a render depends on (template sources, values,
# names, limits), so they never change an outcome.
TEMPLATES = render.COMPILED  # package verification fills it too
RENDERED = render.RenderedTemplates()
# Whole plans' renders, by package (its identity: the runner keeps one Package per OperatorVersion), plan and
# scene; each entry holds its package, so an id is never reused while its entry lives. Shared: read only.
PLANS: Lru[tuple[Package, Plan, Rendered]] = Lru(256)


def render_plan(pkg: Package, plan: Plan, scene: Scene) -> Rendered:
    """What every task of every step of `plan` renders, by (step, task); the same render (shared, not to be
    changed) while the package, the plan, the values and the pipe outputs are the same."""
    base = render.RenderContext(
        instance=scene.owner.name, namespace=scene.owner.namespace, params=scene.values, plan=plan.name,
        pipes=scene.pipes, instance_uid=scene.owner.uid or None,
    )
    place = scene_key(pkg, base, render.DEFAULT_LIMITS)
    key = None if place is None else (id(pkg), plan.name, place)
    kept = PLANS.get(key) if key is not None else None
    if kept is not None and kept[0] is pkg and kept[1] is plan:
        return kept[2]
    found = rendered_plan(pkg, plan, base)
    if key is not None:
        PLANS.put(key, (pkg, plan, found))
    return found


def rendered_plan(pkg: Package, plan: Plan, base: render.RenderContext) -> dict[tuple[str, str], TaskRender]:
    """`render_plan` without the plan memo (the templates' memo still serves each template)."""
    by_step = render.render_plan_tasks(pkg, plan.name, base, cache=TEMPLATES, memo=RENDERED)
    found: dict[tuple[str, str], TaskRender] = {}
    for phase in plan.phases:
        for step in phase.steps:
            outputs = iter(by_step.get(step.name) or [])
            for name in step.tasks:
                ctx = dataclasses.replace(base, phase=phase.name, step=step.name, task=name)
                found[(step.name, name)] = task_render(pkg, pkg.task(name), ctx, next(outputs, []))
    return found


def task_render(pkg: Package, task: Task, ctx: render.RenderContext, objects: list[Json]) -> TaskRender:
    """The task's share of the plan's render (`objects`: what the plan render gave this task)."""
    if task.kind is TaskKind.OPERATOR:
        return TaskRender(objects=(children.child_instance(pkg, task, ctx),))
    if task.kind is TaskKind.WAIT:
        return TaskRender(waits=tuple(pair for w in task.wait_for for pair in wait_targets(pkg, task, w, ctx)))
    return TaskRender(objects=tuple(objects))


def wait_targets(pkg: Package, task: Task, wait: WaitFor, ctx: render.RenderContext) -> list[tuple[Ref, str]]:
    """The objects one `for` entry names: those its template renders, or `[apiVersion/]kind/name`."""
    if wait.resource.endswith((".yaml", ".yml")):
        objects = render.render_template(pkg, wait.resource, ctx, cache=TEMPLATES, memo=RENDERED)
        return [(Ref.of(obj), wait.condition) for obj in objects]
    return [(named_ref(task, wait.resource, ctx.namespace), wait.condition)]


def named_ref(task: Task, resource: str, namespace: str) -> Ref:
    """`kind/name` (a well-known kind) or `apiVersion/kind/name`, in the Instance's namespace when namespaced."""
    *api, kind, name = ["", *resource.split("/")] if resource.count("/") == 0 else resource.split("/")
    api_version = "/".join(api) or KNOWN_KINDS.get(kind, "")
    if not api_version or not kind or not name:
        reason = f"task {task.name} waits for {resource!r}: write it as kind/name or apiVersion/kind/name"
        raise RenderError("operator.yaml", None, reason)
    return Ref(api_version, kind, namespace if render.is_namespaced(api_version, kind) else None, name)
