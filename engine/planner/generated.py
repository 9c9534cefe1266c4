"""Generated parameter values as the planner sees them: read from the Instance's Secret, never made here.

A parameter with `generate` that the spec gives no value gets one made once, by the shell, and kept in the
Secret `<instance>-kplan-generated` (owned by the Instance). The planner reads that Secret like any observed
object: while a value is missing it asks for it (GenerateParameters) and plans nothing else; once every value
is there, the values count as given (secret, so only their digests reach the status).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from engine.model import Generated, Package
from engine.planner import view
from engine.planner.refs import Ref
from engine.planner.stamping import Owner, stamp

__all__ = ["SUFFIX", "missing", "secret_object", "secret_ref", "stored", "with_generated"]

SUFFIX = "-kplan-generated"
Observed = Mapping[Ref, Mapping[str, Any]]


def secret_ref(instance: Mapping[str, Any]) -> Ref:
    return Ref("v1", "Secret", view.namespace(instance), view.name(instance) + SUFFIX)


def secret_object(pkg: Package, instance: Mapping[str, Any]) -> dict[str, Any]:
    """The Secret of generated values, without its data: kplan's labels and the Instance as its controller."""
    ref = secret_ref(instance)
    owner = Owner(view.name(instance), view.namespace(instance), view.uid(instance), pkg.name)
    obj = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
           "metadata": {"name": ref.name, "namespace": ref.namespace}}
    return stamp(obj, owner, plan="", step="")


def stored(instance: Mapping[str, Any], observed: Observed) -> dict[str, str]:
    """The values in the Instance's Secret of generated values; nothing when it is absent or not the Instance's."""
    secret = observed.get(secret_ref(instance))
    if secret is None or not owned_by(secret, view.uid(instance)):
        return {}
    found = {}
    for key, value in (secret.get("data") or {}).items():
        try:
            found[str(key)] = base64.b64decode(str(value), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            continue
    return found


def owned_by(obj: Mapping[str, Any], uid: str) -> bool:
    return bool(uid) and any(o.get("uid") == uid for o in (obj.get("metadata") or {}).get("ownerReferences") or [])


def wanted(pkg: Package, instance: Mapping[str, Any]) -> dict[str, Generated]:
    """The generated parameters of `pkg` the spec gives no value."""
    given = view.given_parameters(instance)
    return {p.name: p.generate for p in pkg.parameters if p.generate is not None and given.get(p.name) is None}


def missing(pkg: Package, instance: Mapping[str, Any], observed: Observed) -> tuple[tuple[str, Generated], ...]:
    """The generated parameters that need a value made (none given, none stored), sorted by name."""
    have = stored(instance, observed)
    return tuple(sorted((k, g) for k, g in wanted(pkg, instance).items() if k not in have))


def with_generated(pkgs: tuple[Package, ...], instance: Mapping[str, Any], observed: Observed) -> Mapping[str, Any]:
    """`instance` with the stored value of every generated parameter of `pkgs` it gives none, as if given."""
    have = stored(instance, observed)
    if not have:
        return instance
    fill = {k: v for pkg in pkgs for k in wanted(pkg, instance) if (v := have.get(k)) is not None}
    if not fill:
        return instance
    spec = dict(view.spec(instance))
    spec["parameters"] = {**view.given_parameters(instance), **fill}
    return {**instance, "spec": spec}
