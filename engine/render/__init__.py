"""Sandboxed Jinja2 rendering of package templates into stamped Kubernetes objects."""

from engine.render.cache import COMPILED, CompiledTemplates
from engine.render.checks import check_template, referenced_params
from engine.render.context import RenderContext
from engine.render.includes import Cycle, include_cycles
from engine.render.limits import DEFAULT_LIMITS, Limits
from engine.render.memo import RenderedTemplates
from engine.render.rendering import render_plan, render_plan_tasks, render_string, render_task, render_template
from engine.render.sandbox import environment
from engine.render.stamping import (
    ANNOTATION_CONFIG_HASH,
    ANNOTATION_PLAN,
    ANNOTATION_STEP,
    LABEL_INSTANCE,
    LABEL_MANAGED_BY,
    LABEL_OPERATOR,
    is_namespaced,
)

__all__ = [
    "ANNOTATION_CONFIG_HASH",
    "ANNOTATION_PLAN",
    "ANNOTATION_STEP",
    "COMPILED",
    "DEFAULT_LIMITS",
    "LABEL_INSTANCE",
    "LABEL_MANAGED_BY",
    "LABEL_OPERATOR",
    "CompiledTemplates",
    "Cycle",
    "Limits",
    "RenderContext",
    "RenderedTemplates",
    "check_template",
    "environment",
    "include_cycles",
    "is_namespaced",
    "referenced_params",
    "render_plan",
    "render_plan_tasks",
    "render_string",
    "render_task",
    "render_template",
]
