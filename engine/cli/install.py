"""`kplan install PKG`: verify and render the package, then record Operator, OperatorVersion and Instance."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, TextIO

from engine import params
from engine.cli import flags, progress
from engine.cli.cluster import INSTANCE, connect_from, require_crds
from engine.cli.following import Target, ended_with, follow
from engine.cli.preflight import Prepared, prepare
from engine.cli.records import (
    instance_object,
    packages_to_record,
    record_checked,
    same_as_sent,
)
from engine.errors import PermanentError
from engine.kube import Kube
from engine.model import Package

__all__ = ["register", "run"]


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("install", help="install a package as an Instance (runs its deploy plan)",
                                   parents=parents)
    flags.add_package_argument(parser)
    flags.add_instance_flag(parser, required=False)
    flags.add_parameter_flags(parser)
    flags.add_wait_flags(parser, "the deploy plan ends")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    kube = connect_from(args)
    prepared = prepare(args.package, args.parameter_file, args.parameter, args.instance, kube.namespace,
                       plain_http=args.plain_http)
    name = args.instance or prepared.pkg.name
    created, lines = record_instance(kube, prepared, name)
    for line in [*prepared.notes, *lines, *summary(prepared)]:
        print(line)
    if not args.wait:
        return 0
    target = Target("deploy", None, int(created["metadata"].get("generation") or 0))
    found, state = follow(kube, created, target, args.timeout, sys.stdout)
    print_tree(found, prepared.pkg, "deploy", sys.stdout)
    return ended_with(found, state, "deploy")


def record_instance(kube: Kube, prepared: Prepared, name: str, runner: str | None = None, *,
                    absent: bool = False) -> tuple[dict[str, Any], list[str]]:
    """Check everything the cluster could refuse first, then create the packages' objects and the Instance;
    the Instance and what was created, kubectl-style. `absent`: the caller has just read that no Instance of that
    name exists (and that the CRDs are served), so it is not asked again."""
    namespace = kube.namespace
    if not absent:
        require_crds(kube)
    if not absent and kube.get(*INSTANCE, name, namespace) is not None:
        raise PermanentError(f"instance {name!r} already exists in namespace {namespace!r}; use update or upgrade")
    packages = packages_to_record(prepared.pkg, prepared.dependencies)
    lines = record_checked(kube, packages, prepared.dependencies, namespace, prepared.origins)
    instance = instance_object(prepared.pkg, name, namespace, prepared.given, runner=runner)
    created = kube.create(instance, same=same_as_sent(instance))
    return created, [*lines, f"instance.kplan.dev/{name} created"]


def summary(prepared: Prepared) -> list[str]:
    """The given parameters (secrets redacted), when there are any."""
    return [f"parameters: {parameter_text(prepared.pkg, prepared.given)}"] if prepared.given else []


def parameter_text(pkg: Package, values: dict[str, Any]) -> str:
    shown = params.redact(pkg, values)
    return ", ".join(f"{k}={params.value_text(shown[k])}" for k in sorted(shown))


def print_tree(instance: dict[str, Any], pkg: Package | None, plan: str | None, out: TextIO) -> None:
    plans = [plan] if plan else None
    out.write(progress.status_tree(instance, pkg, datetime.now(UTC), plans))
