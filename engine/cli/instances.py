"""`kplan update|upgrade|rollback|uninstall --instance NAME`: changing an installed Instance."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from engine import render
from engine.cli import changes, flags, progress
from engine.cli.cluster import INSTANCE, connect_from, instance_of, package_of, version_name_of
from engine.cli.driving import Driver
from engine.cli.following import Target, ended_with, follow, follow_deletion, target_after
from engine.cli.install import parameter_text, print_tree
from engine.cli.preflight import check_renders, given_values, prepare, secrets_hidden, with_stand_ins
from engine.cli.records import check_versions, packages_to_record, record_packages
from engine.errors import PermanentError
from engine.kube import Conflict, Kube
from engine.model import Package
from engine.planner.triggers import upgrade_plan
from engine.runner import CLI, DRIVER_ANNOTATION

__all__ = ["register"]

Json = dict[str, Any]
PATCH_ATTEMPTS = 5  # status writes of the manager between reading the Instance and patching it


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    update = subparsers.add_parser("update", help="change an Instance's parameters (runs the plan they trigger)",
                                   parents=parents)
    flags.add_instance_flag(update)
    flags.add_parameter_flags(update)
    flags.add_wait_flags(update)
    update.set_defaults(func=run_update)

    upgrade = subparsers.add_parser("upgrade", help="move an Instance to a newer version of its package",
                                    parents=parents)
    flags.add_package_argument(upgrade, f"the newer version: {flags.PACKAGE_HELP}; a repository package without "
                               "a version is the newest whose upgradableFrom admits the running one")
    flags.add_instance_flag(upgrade)
    flags.add_parameter_flags(upgrade)
    flags.add_wait_flags(upgrade)
    upgrade.set_defaults(func=run_upgrade)

    rollback = subparsers.add_parser("rollback", help="return to the previous version and parameters",
                                     parents=parents)
    flags.add_instance_flag(rollback)
    flags.add_wait_flags(rollback)
    rollback.set_defaults(func=run_rollback)

    uninstall = subparsers.add_parser("uninstall", help="delete an Instance (its cleanup plan runs first)",
                                      parents=parents)
    flags.add_instance_flag(uninstall)
    flags.add_wait_flags(uninstall, "the Instance is gone")
    uninstall.add_argument("--force", action="store_true",
                           help="delete a child Instance although the parent that created it will create it again")
    uninstall.add_argument("--delete-volumes", action="store_true",
                           help="also delete the volumes (PVCs) its StatefulSets made, which are otherwise kept")
    uninstall.set_defaults(func=run_uninstall)


# --- update ------------------------------------------------------------------------------------


def run_update(args: argparse.Namespace) -> int:
    if not args.parameter and not args.parameter_file:
        print("error: update needs at least one -p NAME=VALUE or -P FILE", file=sys.stderr)
        return 2
    kube = connect_from(args)
    instance = instance_of(kube, args.instance)
    pkg = package_of(kube, instance)
    driven_here(instance, args.wait)
    current = spec_parameters(instance)
    with secrets_hidden(pkg, args.parameter, current):
        given = given_values(pkg, args.parameter_file, args.parameter)
        wanted = {**current, **given}
        plan = changes.triggered_plan(pkg, current, wanted)
        check_renders(pkg, args.instance, kube.namespace, with_stand_ins(pkg, changes.resolved_or_given(pkg, wanted)))
    if plan is None:
        return unchanged(args.instance)
    patched = patch_spec(kube, instance, {"parameters": changes.parameters_patch(current, wanted)})
    if generation(patched) == generation(instance):  # the server kept the spec as it was: no plan will run
        return unchanged(args.instance)
    print(f"instance.kplan.dev/{args.instance} updated ({parameter_text(pkg, given)}); {runs(instance, plan)}")
    return waited(kube, args, instance, patched, plan, pkg)


# --- upgrade -----------------------------------------------------------------------------------


def run_upgrade(args: argparse.Namespace) -> int:
    kube = connect_from(args)
    instance = instance_of(kube, args.instance)
    current_pkg = package_of(kube, instance)
    driven_here(instance, args.wait)
    current = spec_parameters(instance)
    prepared = prepare(args.package, args.parameter_file, args.parameter, args.instance, kube.namespace, current,
                       plain_http=args.plain_http, running=current_pkg.operator_version)
    pkg = prepared.pkg
    changes.upgrade_check(pkg, current_pkg)
    changes.immutables_kept(pkg, changes.resolved_or_given(current_pkg, current), prepared.given)
    packages = packages_to_record(pkg, prepared.dependencies)
    check_versions(kube, packages, prepared.dependencies, kube.namespace)
    record_packages(kube, packages, kube.namespace, prepared.origins)
    declared = {p.name for p in pkg.parameters}
    dropped = sorted(k for k in current if k not in declared)
    wanted = {**{k: v for k, v in current.items() if k in declared}, **prepared.given}
    spec = {"operatorVersion": {"name": pkg.version_name}, "parameters": changes.parameters_patch(current, wanted)}
    patched = patch_spec(kube, instance, spec)
    plan = upgrade_plan(pkg)
    for note in prepared.notes:
        print(note)
    print(f"instance.kplan.dev/{args.instance} upgraded from {current_pkg.version_name} to {pkg.version_name}; "
          f"{runs(instance, plan)}")
    for name in dropped:
        print(f"parameter {name} is not declared by {pkg.version_name} and was removed")
    return waited(kube, args, instance, patched, plan, pkg)


# --- rollback ----------------------------------------------------------------------------------


def run_rollback(args: argparse.Namespace) -> int:
    kube = connect_from(args)
    instance = instance_of(kube, args.instance)
    pkg = package_of(kube, instance)
    driven_here(instance, args.wait)
    current, version = spec_parameters(instance), version_name_of(instance)
    history = list((instance.get("status") or {}).get("history") or [])
    entry = changes.rollback_entry(history, version, changes.public_values(pkg, current))
    if entry is None:
        raise PermanentError(f"instance {args.instance!r} has no earlier version or parameters to roll back to")
    target_version = str(entry.get("operatorVersion") or version)
    target_pkg = pkg if target_version == version else package_of(kube, instance, target_version)
    wanted = changes.rollback_parameters(target_pkg, entry, current)
    plan = rollback_plan(target_pkg, target_version != version, current, wanted)
    spec: Json = {"parameters": changes.parameters_patch(current, wanted)}
    if target_version != version:
        spec["operatorVersion"] = {"name": target_version}
    patched = patch_spec(kube, instance, spec)
    print(f"instance.kplan.dev/{args.instance} rolled back to {target_version} with the parameters of "
          f"{entry.get('at')}; {runs(instance, plan)}")
    return waited(kube, args, instance, patched, plan, target_pkg)


def rollback_plan(pkg: Package, version_changed: bool, current: Mapping[str, Any], wanted: Mapping[str, Any]) -> str:
    if version_changed:
        return upgrade_plan(pkg)
    return changes.triggered_plan(pkg, current, wanted) or pkg.default_trigger()


# --- uninstall ---------------------------------------------------------------------------------


def run_uninstall(args: argparse.Namespace) -> int:
    """Delete the Instance; one that `kplan run` drives is driven here through its cleanup, as no manager will."""
    kube = connect_from(args)
    gone = kube.get(*INSTANCE, args.instance, kube.namespace) is None
    if gone and args.delete_volumes and volumes_of(kube, args.instance):
        volumes(kube, args.instance, delete=True)  # uninstalled before: what it left behind
        return 0
    instance = instance_of(kube, args.instance)
    parent = parent_of(instance)
    if parent and not args.force:
        raise PermanentError(f"instance {args.instance!r} belongs to instance {parent!r}, whose Operator task would "
                             f"create it again; uninstall {parent!r} instead, or give --force to delete it anyway")
    kube.delete(*INSTANCE, args.instance, kube.namespace)
    print(f'instance.kplan.dev "{args.instance}" deleted')
    if driven_by_cli(instance):
        driver = Driver(kube, kube.namespace, args.instance, lambda event: print(progress.event_line(event)))
        driver.drive_until(lambda obj: obj is None, args.timeout, f"instance {args.instance!r} was not gone")
        print(f'instance.kplan.dev "{args.instance}" is gone')
    elif args.wait or args.delete_volumes:  # volumes go once no StatefulSet would make them again
        follow_deletion(kube, instance, args.timeout, sys.stdout)
        print(f'instance.kplan.dev "{args.instance}" is gone')
    volumes(kube, args.instance, delete=args.delete_volumes)
    return 0


def parent_of(instance: Mapping[str, Any]) -> str | None:
    """The name of the Instance that owns this one (an Operator task created it), if any."""
    owners = (instance.get("metadata") or {}).get("ownerReferences") or []
    return next((str(o.get("name")) for o in owners
                 if o.get("kind") == "Instance" and str(o.get("apiVersion") or "").startswith("kplan.dev/")), None)


def volumes(kube: Kube, name: str, *, delete: bool) -> None:
    """Say which volumes of the Instance's StatefulSets are kept (Kubernetes keeps them), or delete them."""
    claims = volumes_of(kube, name)
    for claim in claims if delete else ():
        kube.delete("v1", "PersistentVolumeClaim", claim, kube.namespace)
        print(f'persistentvolumeclaim "{claim}" deleted')
    if claims and not delete:
        print(f"kept {len(claims)} volume{'s' if len(claims) > 1 else ''} with their data (PVCs its StatefulSets "
              f"made): {', '.join(claims)}; delete them with `kplan uninstall --instance {name} -n {kube.namespace} "
              "--delete-volumes`")


def volumes_of(kube: Kube, name: str) -> list[str]:
    """The PVCs made from the claim templates of the Instance's StatefulSets (labelled, owned by nobody)."""
    found = kube.list("v1", "PersistentVolumeClaim", kube.namespace, label_selector=f"{render.LABEL_INSTANCE}={name}")
    return sorted(str(c["metadata"]["name"]) for c in found
                  if not c["metadata"].get("ownerReferences") and not c["metadata"].get("deletionTimestamp"))


# --- shared ------------------------------------------------------------------------------------


def unchanged(name: str) -> int:
    print(f"instance.kplan.dev/{name} unchanged: the parameters already have these values")
    return 0


def generation(instance: Mapping[str, Any] | None) -> Any:
    return ((instance or {}).get("metadata") or {}).get("generation")


def spec_parameters(instance: Mapping[str, Any]) -> Json:
    return dict((instance.get("spec") or {}).get("parameters") or {})


def driven_by_cli(instance: Mapping[str, Any]) -> bool:
    return ((instance.get("metadata") or {}).get("annotations") or {}).get(DRIVER_ANNOTATION) == CLI


def runs(instance: Mapping[str, Any], plan: str) -> str:
    """`plan X runs`, or, for an Instance only `kplan run` drives, that it runs once `kplan run` drives it."""
    if not driven_by_cli(instance):
        return f"plan {plan} runs"
    name = (instance.get("metadata") or {}).get("name")
    return (f"plan {plan} runs when `kplan run PKG --instance {name}` drives it (no manager runs an Instance "
            "that `kplan run` installed)")


def driven_here(instance: Mapping[str, Any], wait: bool) -> None:
    """Refuse to wait on an Instance that only `kplan run` drives: no manager would ever run its plan."""
    if wait and driven_by_cli(instance):
        name = (instance.get("metadata") or {}).get("name")
        raise PermanentError(f"instance {name!r} is driven by `kplan run`, not by a manager, so --wait would never "
                             "end; change it with `kplan run PKG --instance NAME` instead")


def patch_spec(kube: Kube, instance: Mapping[str, Any], spec: Json) -> Json:
    """Merge-patch the Instance's spec, on the condition that its spec did not change since it was read.

    The manager writes the status all the time, which changes the resourceVersion but not the generation:
    such a conflict is retried with the fresh resourceVersion; a new generation (someone changed the spec)
    is refused.
    """
    meta = instance.get("metadata") or {}
    name, namespace = str(meta.get("name")), str(meta.get("namespace"))
    for _ in range(PATCH_ATTEMPTS):
        patch = {"metadata": {"resourceVersion": meta.get("resourceVersion")}, "spec": spec}
        try:
            return kube.patch(*INSTANCE, name, namespace, patch)
        except Conflict:
            fresh = kube.get(*INSTANCE, name, namespace)
            if fresh is None or (fresh.get("metadata") or {}).get("generation") != meta.get("generation"):
                raise PermanentError(f"instance {name!r} was changed by someone else meanwhile; try again") from None
            meta = fresh.get("metadata") or {}
    raise PermanentError(f"instance {name!r} kept changing; try again")


def waited(kube: Kube, args: argparse.Namespace, before: Json, patched: Json, plan: str, pkg: Package) -> int:
    if not args.wait:
        return 0
    target: Target = target_after(before, plan, patched)
    found, state = follow(kube, patched, target, args.timeout, sys.stdout)
    print_tree(found, pkg, plan, sys.stdout)
    return ended_with(found, state, plan)
