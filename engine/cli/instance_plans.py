"""`kplan plan status|history|trigger --instance NAME`: an Instance's plans, as its status records them."""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from engine import params
from engine.cli import flags, output, progress
from engine.cli.cluster import INSTANCE, connect_from, instance_of, package_of, try_package_of
from engine.cli.following import Target, ended_with, follow, outcome, target_after
from engine.cli.install import print_tree
from engine.cli.instances import driven_by_cli, driven_here, patch_spec, runs
from engine.errors import PermanentError
from engine.kube import Kube
from engine.model import Package

__all__ = ["add_history", "add_status", "add_trigger"]

Json = dict[str, Any]


def add_status(sub: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("status", help="an Instance's plans as a tree of phases and steps", parents=parents)
    flags.add_instance_flag(parser)
    parser.add_argument("--plan", help="show only this plan (default: every plan of the package)")
    flags.add_wait_flags(parser, "the active plan ends (the tree is printed again on each change)")
    flags.accepts_output(parser, "table", "yaml", "json")
    parser.set_defaults(func=run_status)


def add_history(sub: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("history", help="every plan's last run, and the versions and parameters over time",
                            parents=parents)
    flags.add_instance_flag(parser)
    flags.accepts_output(parser, "table", "yaml", "json")
    parser.set_defaults(func=run_history)


def add_trigger(sub: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("trigger", help="run a plan of an Instance now", parents=parents)
    parser.add_argument("plan", metavar="PLAN", help="name of the plan")
    flags.add_instance_flag(parser)
    flags.add_wait_flags(parser)
    parser.set_defaults(func=run_trigger)


# --- status ------------------------------------------------------------------------------------


def run_status(args: argparse.Namespace) -> int:
    kube = connect_from(args)
    instance = instance_of(kube, args.instance)
    pkg = try_package_of(kube, instance)
    if args.plan and pkg is not None:
        pkg.plan(args.plan)  # PlanNotFound for a plan the package does not have
    plans = [args.plan] if args.plan else None
    if args.output in ("yaml", "json"):
        output.emit(instance.get("status") or {}, args.output, sys.stdout)
        return 0
    if not args.wait:
        sys.stdout.write(progress.status_tree(instance, pkg, datetime.now(UTC), plans))
        return 0
    if driven_by_cli(instance) and ended(instance, args.plan) is None:
        raise PermanentError(f"instance {args.instance!r} is driven by `kplan run`, not by a manager, so its plan "
                             "only moves while `kplan run PKG --instance NAME` runs; --wait would never end")
    found = watch_tree(kube, instance, pkg, plans, args.timeout)
    return ended_with(found, str(ended(found, args.plan)), args.plan)


def ended(instance: Mapping[str, Any], plan: str | None) -> str | None:
    """How `plan` (None: the active plan) ended, once it has at the Instance's current generation."""
    return outcome(instance, Target(plan, None, generation_of(instance)))


def watch_tree(kube: Kube, instance: Json, pkg: Package | None, plans: list[str] | None, timeout: float) -> Json:
    """Print the tree now and on every change of the Instance, until the plan shown (or the active one) ended."""
    shown = [""]

    def changed(obj: Json | None) -> bool:
        if obj is None:
            raise PermanentError(f"instance {instance['metadata']['name']!r} was deleted")
        tree = progress.status_tree(obj, pkg, datetime.now(UTC), plans)
        if tree != shown[0]:
            sys.stdout.write(tree + "\n")
            sys.stdout.flush()
            shown[0] = tree
        return ended(obj, plans[0] if plans else None) is not None

    meta = instance["metadata"]
    found = kube.wait_for(*INSTANCE, str(meta["name"]), str(meta["namespace"]), changed, timeout,
                          condition="the end of the plan")
    assert found is not None
    return found


def generation_of(instance: Mapping[str, Any]) -> int:
    generation = (instance.get("metadata") or {}).get("generation")
    return generation if isinstance(generation, int) else 0


# --- history -----------------------------------------------------------------------------------


def run_history(args: argparse.Namespace) -> int:
    kube = connect_from(args)
    instance = instance_of(kube, args.instance)
    pkg = try_package_of(kube, instance)
    status = instance.get("status") or {}
    recorded = status.get("plans") or {}
    names = sorted(set(pkg.plans if pkg else ()) | set(recorded))
    history = [{**entry, "parameters": redacted(pkg, entry.get("parameters") or {})}
               for entry in status.get("history") or []]
    if args.output in ("yaml", "json"):
        data = {"plans": {name: plan_summary(recorded.get(name) or {}) for name in names}, "history": history}
        output.emit(data, args.output, sys.stdout)
        return 0
    rows = [plan_row(name, recorded.get(name) or {}) for name in names]
    sys.stdout.write(output.table(("plan", "status", "uid", "started", "last updated", "duration"), rows))
    sys.stdout.write("\n")
    versions = [[i + 1, e.get("operatorVersion"), e.get("at"), parameters_cell(e["parameters"])]
                for i, e in enumerate(history)]
    sys.stdout.write(output.table(("revision", "operator version", "at", "parameters"), versions))
    return 0


def plan_summary(record: Mapping[str, Any]) -> Json:
    keys = ("status", "uid", "startedAt", "lastUpdatedAt", "message")
    return {k: record[k] for k in keys if record.get(k)} or {"status": "NEVER_RUN"}


def plan_row(name: str, record: Mapping[str, Any]) -> list[Any]:
    state = str(record.get("status") or "NEVER_RUN")
    took = progress.took(record, datetime.now(UTC), state).strip(" ()")
    return [name, state, record.get("uid") or "", record.get("startedAt") or "", record.get("lastUpdatedAt") or "",
            took]


def redacted(pkg: Package | None, values: Mapping[str, Any]) -> Json:
    return params.redact(pkg, values) if pkg is not None else dict(values)


def parameters_cell(values: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={params.value_text(v)}" for k, v in sorted(values.items())) or "-"


# --- trigger -----------------------------------------------------------------------------------


def run_trigger(args: argparse.Namespace) -> int:
    kube = connect_from(args)
    instance = instance_of(kube, args.instance)
    pkg = package_of(kube, instance)
    if args.plan not in pkg.plans:
        known = ", ".join(sorted(pkg.plans))
        raise PermanentError(f"package {pkg.name} {pkg.operator_version} has no plan named {args.plan!r} "
                             f"(its plans: {known})")
    driven_here(instance, args.wait)
    request = {"planName": args.plan, "uid": str(uuid.uuid4())}
    patched = patch_spec(kube, instance, {"planExecution": request})
    pending = "" if not driven_by_cli(instance) else f"; {runs(instance, args.plan)}"
    print(f"instance.kplan.dev/{args.instance}: plan {args.plan} triggered (uid {request['uid']}){pending}")
    if not args.wait:
        return 0
    found, state = follow(kube, patched, target_after(instance, args.plan, patched), args.timeout, sys.stdout)
    print_tree(found, pkg, args.plan, sys.stdout)
    return ended_with(found, state, args.plan)

