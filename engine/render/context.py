"""What a template sees: the render context and the variables built from it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from engine.model import Package
from engine.render.values import wrap

__all__ = ["RenderContext", "template_variables", "with_location"]


@dataclass(frozen=True)
class RenderContext:
    """Where and for whom a template renders; see `template_variables` for the names."""

    instance: str
    namespace: str
    params: Mapping[str, Any]
    plan: str = ""
    phase: str = ""
    step: str = ""
    task: str = ""
    pipes: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    instance_uid: str | None = None


def template_variables(ctx: RenderContext, pkg: Package | None = None) -> dict[str, Any]:
    """Params, Name, Namespace, OperatorName, OperatorVersion, AppVersion, PlanName, PhaseName,
    StepName, TaskName and Pipes (the package names are left out when there is no package)."""
    variables: dict[str, Any] = {
        "Params": wrap("Params", ctx.params),
        "Pipes": wrap("Pipes", ctx.pipes),
        "Name": ctx.instance,
        "Namespace": ctx.namespace,
        "PlanName": ctx.plan,
        "PhaseName": ctx.phase,
        "StepName": ctx.step,
        "TaskName": ctx.task,
    }
    if pkg is not None:
        variables.update(
            OperatorName=pkg.name,
            OperatorVersion=pkg.operator_version,
            AppVersion=pkg.app_version or "",
        )
    return variables


def with_location(variables: Mapping[str, Any], ctx: RenderContext) -> dict[str, Any]:
    """`variables` with the plan, phase, step and task names of `ctx`."""
    return {**variables, "PlanName": ctx.plan, "PhaseName": ctx.phase, "StepName": ctx.step, "TaskName": ctx.task}
