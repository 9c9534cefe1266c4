"""`kplan get secret-params --instance X`: where each secret parameter's value is kept, never the value itself.

A value given at install or update is in the Instance's spec; a generated one in the Instance's Secret of
generated values, under the parameter's name. The table says which, and how to read one with kubectl.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from engine.cli import output
from engine.cli.cluster import connect_from, instance_of, package_of
from engine.errors import PermanentError
from engine.model import Package
from engine.planner import generated

__all__ = ["rows", "run"]

HEADERS = ("parameter", "generate", "state", "where")


def run(args: argparse.Namespace) -> int:
    if not args.instance:
        print("error: get secret-params needs --instance NAME", file=sys.stderr)
        return 2
    kube = connect_from(args)
    instance = instance_of(kube, args.instance)
    pkg = package_of(kube, instance)
    secret = kube.get("v1", "Secret", generated.secret_ref(instance).name, kube.namespace)
    stored = set((secret or {}).get("data") or {}) if secret and owned(secret, instance) else set()
    found = rows(pkg, instance, stored)
    if not found:
        raise PermanentError(f"package {pkg.name} of instance {args.instance!r} has no secret parameters")
    data = [dict(zip(HEADERS, r, strict=True)) for r in found]
    output.emit(data, args.output, sys.stdout, HEADERS, found)
    if args.output not in ("yaml", "json") and stored:
        name = generated.secret_ref(instance).name
        print(f"read a generated value with: kubectl get secret {name} -n {kube.namespace} "
              "-o jsonpath='{.data.PARAMETER}' | base64 -d", file=sys.stderr)
    return 0


def owned(secret: Mapping[str, Any], instance: Mapping[str, Any]) -> bool:
    return generated.owned_by(secret, str((instance.get("metadata") or {}).get("uid") or ""))


def rows(pkg: Package, instance: Mapping[str, Any], stored: set[str]) -> list[list[str]]:
    """One row per secret parameter: how it is generated, whether it is given/generated/pending, and where."""
    given = (instance.get("spec") or {}).get("parameters") or {}
    name = str((instance.get("metadata") or {}).get("name") or "")
    secret = generated.secret_ref(instance).name
    found = []
    for param in sorted((p for p in pkg.parameters if p.secret), key=lambda p: p.name):
        how = describe(param.generate.kind.value, param.generate.length) if param.generate else ""
        if given.get(param.name) is not None:
            found.append([param.name, how, "given", f"instance/{name} spec.parameters.{param.name}"])
        elif param.name in stored:
            found.append([param.name, how, "generated", f"secret/{secret} key {param.name}"])
        elif param.generate:
            found.append([param.name, how, "pending", f"secret/{secret} key {param.name} (not generated yet)"])
        else:
            found.append([param.name, how, "unset", ""])
    return found


def describe(kind: str, length: int | None) -> str:
    return f"{kind}({length})" if length else kind
