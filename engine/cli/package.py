"""`kplan package new|verify|create|list|push`: authoring operator packages, and pushing them to OCI registries."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine import params
from engine.cli import flags, kudo, output
from engine.cli.sources import load_package
from engine.errors import PackageInvalid
from engine.model import Package
from engine.package import archive, dump, skeleton, verify

LISTS = ("params", "plans", "tasks")


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("package", help="author operator packages", parents=parents)
    sub = parser.add_subparsers(dest="package_command", metavar="COMMAND", required=True)

    new = sub.add_parser("new", help="create a new package folder that passes verification", parents=parents)
    new.add_argument("name", metavar="NAME")
    new.add_argument("-d", "--dir", default=".", help="folder to create the package in (default: .)")
    new.set_defaults(func=run_new)

    check = sub.add_parser("verify", help="list every problem of a package", parents=parents)
    check.add_argument("package", metavar="PKG", help="package folder, .tgz or URL")
    check.set_defaults(func=run_verify)

    create = sub.add_parser("create", help="write the package as <name>-<version>.tgz", parents=parents)
    create.add_argument("package", metavar="PKG", help="package folder")
    create.add_argument("-d", "--dir", default=".", help="folder to write the archive to (default: .)")
    create.set_defaults(func=run_create)

    show = sub.add_parser("list", help="list a package's params, plans or tasks", parents=parents)
    show.add_argument("what", choices=LISTS)
    show.add_argument("package", metavar="PKG", help="package folder, .tgz or URL")
    flags.accepts_output(show, "table", "yaml", "json")
    show.set_defaults(func=run_list)

    push = sub.add_parser("push", help="push a package to an OCI registry as an artifact", parents=parents)
    push.add_argument("package", metavar="PKG", help="package folder or .tgz")
    push.add_argument("target", metavar="oci://HOST[:PORT]/REPO[:TAG]",
                      help="where to push it (the tag defaults to the package's operatorVersion)")
    push.add_argument("--plain-http", action="store_true", help="talk plain HTTP to the registry (no TLS)")
    push.set_defaults(func=run_push)
    kudo.register_convert(sub, list(parents))


def run_new(args: argparse.Namespace) -> int:
    print(skeleton.create(args.name, args.dir))
    return 0


def run_verify(args: argparse.Namespace) -> int:
    try:
        pkg, problems = verify.verify(kudo.read_package_files(args.package), args.package, render=True)
    except PackageInvalid as e:  # unreadable files: the reader found these before any rule ran
        pkg, problems = None, list(e.problems)
    for problem in problems:
        print(problem)
    errors = sum(not p.warning for p in problems)
    if pkg is None:
        print(f"error: {args.package} has {errors} {'error' if errors == 1 else 'errors'}", file=sys.stderr)
        return 1
    warnings = len(problems) - errors
    suffix = f" ({warnings} {'warning' if warnings == 1 else 'warnings'})" if warnings else ""
    print(f"package {pkg.name} {pkg.operator_version} is valid{suffix}")
    return 0


def run_create(args: argparse.Namespace) -> int:
    print(archive.create(args.package, args.dir))
    return 0


def run_push(args: argparse.Namespace) -> int:
    from engine.repo import fetching, oci, references

    if not args.target.startswith("oci://"):
        print(f"error: {args.target!r} is not an OCI reference: write oci://HOST[:PORT]/REPO[:TAG]", file=sys.stderr)
        return 2
    fetched = fetching.from_path(args.package)
    data = Path(args.package).read_bytes() if Path(args.package).is_file() else archive.archive_bytes(fetched.pkg)
    ref = references.parse_oci(args.target, default_tag=fetched.pkg.operator_version)
    if ref.is_digest:
        print("error: push to a tag, not a digest: the registry computes the digest", file=sys.stderr)
        return 2
    digest = oci.push(fetched.pkg, data, ref, plain_http=args.plain_http)
    print(f"pushed {fetched.pkg.name} {fetched.pkg.operator_version} to {ref}")
    print(f"digest: {digest}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    pkg = load_package(args.package).pkg
    data, headers, rows = {"params": _params, "plans": _plans, "tasks": _tasks}[args.what](pkg)
    output.emit(data, args.output, sys.stdout, headers, rows)
    return 0


Listing = tuple[Any, Sequence[str], list[list[Any]]]


def _params(pkg: Package) -> Listing:
    documents = []
    rows = []
    for p in pkg.parameters:
        default = params.redact(pkg, {p.name: p.default})[p.name] if p.has_default else None
        documents.append(dump.parameter_document(p) | ({"default": default} if p.has_default else {}))
        rows.append([
            p.name, p.type.value, _cell(default) if p.has_default else "", "yes" if p.required else "no",
            "yes" if p.immutable else "no", "-" if p.immutable else p.trigger or pkg.default_trigger(), p.description,
        ])
    headers = ("name", "type", "default", "required", "immutable", "trigger", "description")
    return documents, headers, rows


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, list | dict) else str(value)


def _plans(pkg: Package) -> Listing:
    rows = [
        [plan.name, phase.name, phase.strategy.value, step.name, ",".join(step.tasks), ",".join(step.depends_on)]
        for plan in pkg.plans.values()
        for phase in plan.phases
        for step in phase.steps
    ]
    data = {name: dump.plan_document(plan) for name, plan in pkg.plans.items()}
    return data, ("plan", "phase", "strategy", "step", "tasks", "depends-on"), rows


def _tasks(pkg: Package) -> Listing:
    rows = [[t.name, t.kind.value, ",".join(t.templates)] for t in pkg.tasks]
    return [dump.task_document(t) for t in pkg.tasks], ("name", "kind", "templates"), rows
