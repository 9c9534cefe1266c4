"""`kplan diff --instance NAME`: what applying the Instance's last plan would change, and drift of kplan's fields.

Exit codes follow `kubectl diff`: 0 no differences, 1 differences found, 2 an error (the usage errors of
argparse are 2 as well).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine import params
from engine.cli import diffing, flags
from engine.cli.cluster import connect_from, instance_of, package_of
from engine.errors import FieldConflict, KplanError, PermanentError
from engine.kube import Kube
from engine.model import Package, TaskKind
from engine.planner import Ref, ownership, pipes, secrets, tasks, triggers
from engine.planner.rendering import Scene, render_plan
from engine.planner.stamping import Owner
from engine.runner.acting import with_instance_namespace

__all__ = ["register"]

ERROR_EXIT = 2
APPLIED_KINDS = frozenset({TaskKind.APPLY, TaskKind.PIPE, TaskKind.OPERATOR})
Json = dict[str, Any]


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "diff", help="what applying the Instance's last plan would change, and drift (exit 1: differences)",
        parents=parents,
    )
    flags.add_instance_flag(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        found = differences(args)
    except KplanError as err:
        print(f"error: {err}", file=sys.stderr)
        return ERROR_EXIT
    for text in found:
        sys.stdout.write(text)
    return 1 if found else 0


@dataclass(frozen=True)
class Applied:
    """An object the plan applies, with the force setting of its task and the Instance that applies it."""

    obj: Json
    force: bool
    owner: Owner


def differences(args: argparse.Namespace) -> list[str]:
    """The diff and drift text of each object that differs, secrets masked."""
    kube = connect_from(args)
    instance = instance_of(kube, args.instance)
    pkg = package_of(kube, instance)
    last = (instance.get("status") or {}).get("lastRun") or {}
    values = triggers.values_now(pkg, instance, last)
    if values is None:
        raise PermanentError(f"the parameters of instance {args.instance!r} do not fit its package")
    texts = secrets.secret_texts(pkg, values)
    found = []
    for applied in applied_objects(kube, pkg, instance, str(last.get("plan") or "deploy"), values):
        text = compare(kube, applied)
        if text:
            found.append(secrets.scrub(text, texts))
    return found


def applied_objects(kube: Kube, pkg: Package, instance: Mapping[str, Any], plan: str,
                    values: Mapping[str, Any]) -> list[Applied]:
    """What `plan` applies for the Instance, rendered as the engine renders it (with the pipe outputs it has)."""
    meta = instance.get("metadata") or {}
    owner = Owner(str(meta.get("name")), str(meta.get("namespace")), str(meta.get("uid") or ""), pkg.name)
    scene = Scene(owner, values, pipes.pipe_values(pkg, owner, pipe_objects(kube, pkg, owner)))
    found = []
    for (_step, name), rendered in render_plan(pkg, pkg.plan(plan), scene).items():
        task = pkg.task(name)
        if tasks.mode(task, values) in APPLIED_KINDS:
            found += [Applied(with_instance_namespace(obj, owner.namespace), task.force, owner)
                      for obj in rendered.objects]
    return found


def pipe_objects(kube: Kube, pkg: Package, owner: Owner) -> dict[Ref, Json]:
    """The ConfigMaps and Secrets holding the package's pipe outputs, as they are now."""
    found = {}
    for pipe in (p for t in pkg.tasks for p in t.pipe):
        ref = pipes.output_ref(pipe, owner)
        obj = kube.get(ref.api_version, ref.kind, ref.name, ref.namespace)
        if obj is not None:
            found[ref] = obj
    return found


def compare(kube: Kube, applied: Applied) -> str:
    """The diff of one object, followed by its drift and conflict lines; '' when nothing differs."""
    ref = Ref.of(applied.obj)
    live = kube.get(ref.api_version, ref.kind, ref.name, ref.namespace)
    notes: list[str] = []
    manager = manager_for(applied, live)
    try:
        after = kube.apply(applied.obj, force=applied.force, field_manager=manager, dry_run=True)
    except FieldConflict as conflict:
        notes.append(f"conflict: {conflict}; kplan applies it only with force\n")
        after = kube.apply(applied.obj, force=True, field_manager=manager, dry_run=True)
    before, shown = diffing.masked(diffing.stripped(live), diffing.stripped(after))
    text = diffing.unified(before, shown, object_name(ref))
    if live is not None:
        notes += drift_lines(ref, applied.obj, live)
    return text + "".join(notes)


def manager_for(applied: Applied, live: Mapping[str, Any] | None) -> str:
    """The Instance's field manager, or the legacy one on an object whose fields the engine hands over from it
    before applying (a dry run cannot hand over; applying as that manager comes to the same)."""
    owner = applied.owner
    if ownership.handover(Ref.of(applied.obj), live, owner.namespace, owner.name, adopt=False) is not None:
        return ownership.LEGACY_MANAGER
    return owner.manager


def drift_lines(ref: Ref, rendered: Mapping[str, Any], live: Mapping[str, Any]) -> list[str]:
    hidden = ref.kind == "Secret"
    return [f"drift: {ref} {d.path}: kplan applies {shown(d.applied, hidden)}, live has {shown(d.live, hidden)}\n"
            for d in diffing.drifted(rendered, live)]


def shown(value: Any, hidden: bool) -> str:
    if hidden:
        return diffing.MASK
    return "nothing" if value is None else params.value_text(value)


def object_name(ref: Ref) -> str:
    group = ref.api_version.rpartition("/")[0]
    kind = f"{ref.kind}.{group}" if group else ref.kind
    return f"{kind}/{ref.namespace}/{ref.name}" if ref.namespace else f"{kind}/{ref.name}"
