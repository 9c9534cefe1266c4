"""Operator tasks: the child Instance a parent applies, and how far the plan the child runs for it got."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from engine import render, yamlbounds
from engine.model import Package, Task
from engine.planner.stamping import INSTANCE_API, Owner, stamp

__all__ = ["child_instance", "child_state"]

Json = dict[str, Any]
MARKUP = ("{{", "{%", "{#")


def child_instance(pkg: Package, task: Task, ctx: render.RenderContext) -> Json:
    """The child Instance of an Operator task, owned by the parent and stamped like every applied object."""
    owner = Owner(ctx.instance, ctx.namespace, ctx.instance_uid or "", pkg.name)
    package = text(pkg, task.package or "", ctx, f"task {task.name} package")
    version = text(pkg, task.version or "", ctx, f"task {task.name} version")
    name = text(pkg, task.instance_name, ctx, f"task {task.name} instanceName") if task.instance_name else ""
    child = {
        "apiVersion": INSTANCE_API,
        "kind": "Instance",
        "metadata": {"name": name or f"{owner.name}-{package}", "namespace": owner.namespace},
        "spec": {
            "operatorVersion": {"name": f"{package}-{version}"},
            "parameters": {
                k: value(pkg, v, ctx, f"task {task.name} parameter {k}") for k, v in sorted(task.parameters.items())
            },
        },
    }
    return stamp(child, owner, ctx.plan, ctx.step, operator=package)


def text(pkg: Package, source: str, ctx: render.RenderContext, name: str) -> str:
    return render.render_string(source, ctx, name, pkg=pkg) if any(m in source for m in MARKUP) else source


def value(pkg: Package, source: Any, ctx: render.RenderContext, name: str) -> Any:
    """A templated parameter value: a plain string stays as it is; anything else is rendered and typed back."""
    if isinstance(source, str) and not any(m in source for m in MARKUP):
        return source
    rendered = render.render_string(source if isinstance(source, str) else yaml.safe_dump(source), ctx, name, pkg=pkg)
    try:
        return yamlbounds.load(rendered)
    except yaml.YAMLError:
        return rendered


def child_state(child: Mapping[str, Any] | None) -> tuple[str, str]:
    """`(status, message)` of the plan the child runs for its latest spec: its deploy plan on install, the plan a
    parameter change triggers (update, scale, ...) after that. Only once the child saw its latest spec."""
    if child is None:
        return "", "child Instance not found"
    meta, status = child.get("metadata") or {}, child.get("status") or {}
    generation, seen = meta.get("generation"), status.get("observedGeneration")
    if isinstance(generation, int) and (not isinstance(seen, int) or seen < generation):
        return "", f"waiting for the child Instance to observe generation {generation}"
    name = str((status.get("activePlan") or {}).get("name") or "deploy")
    plan = (status.get("plans") or {}).get(name) or {}
    state = str(plan.get("status") or "NEVER_RUN")
    return state, str(plan.get("message") or f"{name} plan {state}")
