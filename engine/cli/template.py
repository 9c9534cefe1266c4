"""`kplan template PKG`: the manifests a plan would apply, rendered offline as one YAML stream.

Documents come step by step in plan order (the DAG's layers). What the plan would delete
(Delete tasks, Toggle tasks whose parameter is false) is left out.

Secret parameters are rendered as `*****` unless `--show-secrets` is given: like every other
command, `template` prints no secret value unless asked to.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from engine import graph, params, render
from engine.cli import flags, output
from engine.cli.preflight import given_values, secrets_hidden
from engine.cli.sources import load_package
from engine.errors import PermanentError
from engine.model import Package, Plan, TaskKind
from engine.planner.children import child_instance


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("template", help="render the manifests a plan would apply", parents=parents)
    parser.add_argument("package", metavar="PKG", help="package folder, .tgz or URL")
    flags.add_parameter_flags(parser)
    parser.add_argument("--instance", help="Instance name (default: the package name)")
    parser.add_argument("--plan", default="deploy", help="plan to render (default: deploy)")
    parser.add_argument("--step", help="render only this step of the plan")
    parser.add_argument("--show-secrets", action="store_true", help="render secret parameters with their values")
    flags.accepts_output(parser, "yaml", "json")
    parser.set_defaults(func=run)


def parameter_values(pkg: Package, args: argparse.Namespace) -> dict[str, Any]:
    """Values from -P, overridden by -p, completed with defaults and validated; a generated parameter without
    a value shows as `<generated KIND>` (the engine makes the real one at install)."""
    with secrets_hidden(pkg, args.parameter):
        values = params.resolve(pkg, given_values(pkg, args.parameter_file, args.parameter))
    return {**values, **{p.name: f"<generated {p.generate.kind.value}>" for p in pkg.parameters
                         if p.generate is not None and values.get(p.name) is None}}


def placeholder_pipes(pkg: Package) -> dict[str, str]:
    """Offline there are no Pipe outputs; templates see a placeholder naming the key instead."""
    return {f.key: f"<output of pipe {f.key}>" for t in pkg.tasks if t.kind is TaskKind.PIPE for f in t.pipe}


def run(args: argparse.Namespace) -> int:
    pkg = load_package(args.package).pkg
    plan = pkg.plan(args.plan)
    values = parameter_values(pkg, args)
    ctx = render.RenderContext(
        instance=args.instance or pkg.name,
        namespace=args.namespace or "default",
        params=values if args.show_secrets else params.redact(pkg, values),
        plan=plan.name,
        pipes=placeholder_pipes(pkg),
    )
    order = [step for layer in graph.layers(graph.build(plan)) for step in layer]
    if args.step is not None:
        if args.step not in order:
            raise PermanentError(f"plan {plan.name!r} has no step named {args.step!r}")
        order = [args.step]
    rendered = plan_objects(pkg, plan, ctx)
    skipped = not_applied(pkg, plan, ctx, values)
    documents = [obj for step in order for obj in rendered.get(step, []) if (step, _key(obj)) not in skipped]
    if args.output == "json":
        sys.stdout.write(output.dump_json(documents) + "\n")
    else:
        sys.stdout.write(output.dump_yaml_stream(documents))
    return 0


def plan_objects(pkg: Package, plan: Plan, ctx: render.RenderContext) -> dict[str, list[dict[str, Any]]]:
    """Step name -> what its tasks apply, in task order: rendered templates, and the child Instance of an
    Operator task."""
    by_task = render.render_plan_tasks(pkg, plan.name, ctx)
    objects: dict[str, list[dict[str, Any]]] = {}
    for phase in plan.phases:
        for step in phase.steps:
            at = replace(ctx, phase=phase.name, step=step.name)
            for task, rendered in zip((pkg.task(n) for n in step.tasks), by_task.get(step.name, []), strict=True):
                operator = task.kind is TaskKind.OPERATOR
                child = [child_instance(pkg, task, replace(at, task=task.name))] if operator else []
                objects.setdefault(step.name, []).extend([*rendered, *child])
    return objects


def not_applied(pkg: Package, plan: Plan, ctx: render.RenderContext, values: Mapping[str, Any]) -> set[tuple[str, Key]]:
    """(step, object) of what Delete tasks remove and switched-off Toggle tasks would delete."""
    skipped: set[tuple[str, Key]] = set()
    for phase in plan.phases:
        for step in phase.steps:
            for task in (pkg.task(name) for name in step.tasks):
                off = task.kind is TaskKind.TOGGLE and not values.get(task.parameter or "")
                if task.kind is TaskKind.DELETE or off:
                    at = replace(ctx, phase=phase.name, step=step.name)
                    skipped.update((step.name, _key(obj)) for obj in render.render_task(pkg, task, at))
    return skipped


Key = tuple[str, str, str, str]


def _key(obj: Mapping[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return (str(obj.get("apiVersion")), str(obj.get("kind")), str(meta.get("namespace")), str(meta.get("name")))
