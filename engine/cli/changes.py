"""What update, upgrade and rollback change, decided without the cluster: plans triggered, refusals, patches."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine import params
from engine.errors import ImmutableParameterChanged, PermanentError, UpgradeRefused
from engine.model import Package
from engine.package import versions

__all__ = [
    "immutables_kept",
    "parameters_patch",
    "public_values",
    "resolved_or_given",
    "rollback_entry",
    "rollback_parameters",
    "triggered_plan",
    "upgrade_check",
]

Json = dict[str, Any]


def resolved_or_given(pkg: Package, given: Mapping[str, Any]) -> dict[str, Any]:
    """The values an Instance runs with now; its spec as it is when it does not resolve (an earlier bad value)."""
    declared = {p.name for p in pkg.parameters}
    try:
        return params.resolve(pkg, {k: v for k, v in given.items() if k in declared})
    except PermanentError:
        return dict(given)


def triggered_plan(pkg: Package, current: Mapping[str, Any], wanted: Mapping[str, Any]) -> str | None:
    """The plan that moving the spec's parameters from `current` to `wanted` runs, None when nothing changes.

    Raises ImmutableParameterChanged, ParameterInvalid, or PermanentError when the triggers disagree.
    """
    declared = {p.name for p in pkg.parameters}
    new = params.resolve(pkg, {k: v for k, v in wanted.items() if k in declared})
    return params.trigger_for_change(pkg, resolved_or_given(pkg, current), new)


def upgrade_check(new: Package, current: Package) -> None:
    """Refuse an upgrade to another package, to a version that is not newer, or one `upgradableFrom` excludes."""
    if new.name != current.name:
        raise UpgradeRefused(f"the instance runs package {current.name!r}, not {new.name!r}")
    if versions.may_upgrade(new, current.operator_version):
        return
    if versions.is_version(current.operator_version) and not newer(new.operator_version, current.operator_version):
        raise UpgradeRefused(
            f"cannot upgrade {current.name} from {current.operator_version} to {new.operator_version}: "
            "the new version must be newer"
        )
    allowed = ", ".join(new.upgradable_from)
    raise UpgradeRefused(
        f"cannot upgrade {current.name} from {current.operator_version} to {new.operator_version}: "
        f"{new.operator_version} is upgradable only from {allowed}"
    )


def newer(a: str, b: str) -> bool:
    return versions.satisfies(a, f">{b}")


def immutables_kept(pkg: Package, current: Mapping[str, Any], given: Mapping[str, Any]) -> None:
    """Refuse a new value (given on an upgrade) for an immutable parameter; `current`: the values in force."""
    for name in sorted(given):
        param = next((p for p in pkg.parameters if p.name == name), None)
        if param is not None and param.immutable and name in current and current[name] != given[name]:
            raise ImmutableParameterChanged(name)


def parameters_patch(current: Mapping[str, Any], wanted: Mapping[str, Any]) -> Json:
    """A merge patch of spec.parameters from `current` to `wanted` (null removes a name).

    A value given replaces the old one: a merge patch merges maps, so the keys of an old map value that
    the new one lacks are nulled out (`-p 'x={}'` empties x), at every depth.
    """
    return merge_diff(current, wanted)


def merge_diff(current: Mapping[str, Any], wanted: Mapping[str, Any]) -> Json:
    """The JSON merge patch (RFC 7396) that turns the map `current` into `wanted`."""
    patch: Json = {k: None for k in current if k not in wanted}
    for key, value in wanted.items():
        old = current.get(key)
        if key in current and old == value:
            continue
        patch[key] = merge_diff(old, value) if isinstance(old, Mapping) and isinstance(value, Mapping) else value
    return patch


def rollback_entry(history: Sequence[Mapping[str, Any]], version: str, public: Mapping[str, Any]) -> Json | None:
    """The newest history entry whose version or (public) parameters differ from what the spec asks for now."""
    for entry in reversed(history):
        if entry.get("operatorVersion") != version or dict(entry.get("parameters") or {}) != dict(public):
            return dict(entry)
    return None


def rollback_parameters(pkg: Package, entry: Mapping[str, Any], current: Mapping[str, Any]) -> Json:
    """The entry's parameters, with the secret parameters of `pkg` at their current values (history omits them)."""
    values = dict(entry.get("parameters") or {})
    for param in pkg.parameters:
        if param.secret and param.name in current:
            values[param.name] = current[param.name]
    return values


def public_values(pkg: Package, values: Mapping[str, Any]) -> dict[str, Any]:
    """Resolved values without secrets, as the history records them."""
    secret = {p.name for p in pkg.parameters if p.secret}
    return {k: v for k, v in sorted(resolved_or_given(pkg, values).items()) if k not in secret}
