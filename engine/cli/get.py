"""`kplan get instances [-A] [-o wide]`: Instances with their operator, version, active plan and its status (wide:
where the package came from and its digest); `kplan get secret-params --instance X`: where each secret value is."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from engine import params
from engine.cli import flags, output, progress
from engine.cli.cluster import INSTANCE, OPERATOR_VERSION, connect_from, require_crds, try_package_of
from engine.cli.records import DIGEST_ANNOTATION, SOURCE_ANNOTATION
from engine.cli.secret_params import run as run_secret_params
from engine.kube import Kube
from engine.model import Package
from engine.planner.times import parse

__all__ = ["register"]

Json = dict[str, Any]
COLUMNS = ("name", "operator", "version", "plan", "status", "age")
WIDE = ("source", "digest")


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("get", help="list kplan objects: get instances, get secret-params --instance X",
                                   parents=parents)
    parser.add_argument("what", choices=("instances", "instance", "secret-params"), metavar="instances|secret-params")
    parser.add_argument("-A", "--all-namespaces", action="store_true", help="list Instances of every namespace")
    parser.add_argument("--instance", metavar="NAME", help="the Instance (get secret-params)")
    flags.accepts_output(parser, "table", "wide", "yaml", "json")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.what == "secret-params":
        return run_secret_params(args)
    kube = connect_from(args)
    require_crds(kube)
    found = kube.list(*INSTANCE, None if args.all_namespaces else kube.namespace)
    packages: dict[str, Package | None] = {}
    origins: dict[str, list[str]] = {}
    instances = [without_secrets(instance, package_for(kube, instance, packages)) for instance in found]
    now = datetime.now(UTC)
    wide = args.output == "wide"
    headers = (("namespace",) if args.all_namespaces else ()) + COLUMNS + (WIDE if wide else ())
    rows = [row(instance, now, args.all_namespaces) + (origin(kube, instance, origins) if wide else [])
            for instance in instances]
    if not rows and args.output not in ("yaml", "json"):
        where = "any namespace" if args.all_namespaces else f"namespace {kube.namespace!r}"
        print(f"No instances found in {where}.", file=sys.stderr)
        return 0
    data = {"apiVersion": "v1", "kind": "List", "items": instances}
    output.emit(data, args.output, sys.stdout, headers, rows)
    return 0


def origin(kube: Kube, instance: Mapping[str, Any], known: dict[str, list[str]]) -> list[str]:
    """Where the Instance's package came from and its digest, as its OperatorVersion records them."""
    meta = instance.get("metadata") or {}
    version = str(((instance.get("spec") or {}).get("operatorVersion") or {}).get("name") or "")
    key = f"{meta.get('namespace')}/{version}"
    if key not in known:
        found = kube.get(*OPERATOR_VERSION, version, str(meta.get("namespace"))) if version else None
        notes = ((found or {}).get("metadata") or {}).get("annotations") or {}
        known[key] = [notes.get(SOURCE_ANNOTATION, ""), notes.get(DIGEST_ANNOTATION, "")]
    return known[key]


def package_for(kube: Kube, instance: Mapping[str, Any], known: dict[str, Package | None]) -> Package | None:
    """The Instance's package, read once per OperatorVersion."""
    meta = instance.get("metadata") or {}
    version = f"{meta.get('namespace')}/{((instance.get('spec') or {}).get('operatorVersion') or {}).get('name')}"
    if version not in known:
        known[version] = try_package_of(kube, instance)
    return known[version]


def without_secrets(instance: Json, pkg: Package | None) -> Json:
    """The Instance with secret parameter values redacted (every value, when its package cannot be read),
    and without managedFields, as kubectl shows objects."""
    given = (instance.get("spec") or {}).get("parameters") or {}
    shown = params.redact(pkg, given) if pkg is not None else {k: params.REDACTED for k in given}
    meta = {k: v for k, v in (instance.get("metadata") or {}).items() if k != "managedFields"}
    return {**instance, "metadata": meta, "spec": {**(instance.get("spec") or {}), "parameters": shown}}


def row(instance: Mapping[str, Any], now: datetime, with_namespace: bool) -> list[Any]:
    meta, status = instance.get("metadata") or {}, instance.get("status") or {}
    active = status.get("activePlan") or {}
    created = parse(meta.get("creationTimestamp"))
    age = progress.duration_text((now - created).total_seconds()) if created else ""
    cells = [meta.get("name"), (meta.get("labels") or {}).get("kplan.dev/operator") or "",
             ((instance.get("spec") or {}).get("operatorVersion") or {}).get("name") or "",
             active.get("name") or "", active.get("status") or "", age]
    return ([meta.get("namespace")] if with_namespace else []) + cells
