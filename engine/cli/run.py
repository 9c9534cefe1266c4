"""`kplan run PKG`: one-shot mode — record the Instance like `install`, then drive its plan from this process.

No manager is needed: the CRDs are installed when missing, the Instance is annotated
`kplan.dev/runner: cli` (managers leave it alone), and the same Runner and Caches as the manager's
carry out the plan, woken by watch events and the planner's timers.
"""

from __future__ import annotations

import argparse
import sys
import uuid
from collections.abc import Sequence
from typing import Any

from engine.cli import changes, flags, progress
from engine.cli.cluster import INSTANCE, connect_from, crds_installed, install_crds, package_of
from engine.cli.driving import Driver
from engine.cli.following import Target, ended_with, standing, target_after
from engine.cli.install import parameter_text, print_tree, record_instance
from engine.cli.instances import patch_spec, spec_parameters
from engine.cli.preflight import Prepared, prepare
from engine.cli.records import check_versions, packages_to_record, record_packages
from engine.cli.sources import load_package
from engine.cli.stdout import survive_closed_stdout
from engine.errors import PermanentError, Timeout
from engine.kube import Kube
from engine.planner.triggers import upgrade_plan
from engine.runner import CLI, DRIVER_ANNOTATION, RunEvent

__all__ = ["register", "run"]

Json = dict[str, Any]


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("run", help="install or change an Instance and run its plan from here "
                                   "(no manager needed)", parents=parents)
    flags.add_package_argument(parser)
    flags.add_instance_flag(parser, required=False)
    flags.add_parameter_flags(parser)
    parser.add_argument("--plan", help="run this plan of an existing Instance (default: what the change triggers)")
    flags.add_timeout_flag(parser, "how long the plan may take")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    survive_closed_stdout()  # `kplan run ... | head`: the plan is driven to its end all the same
    kube = connect_from(args)
    fetched = load_package(args.package, plain_http=args.plain_http)
    name = args.instance or fetched.pkg.name
    installed = crds_installed(kube)
    existing = kube.get(*INSTANCE, name, kube.namespace) if installed else None
    # The parameters an existing Instance has are the base a change starts from.
    prepared = prepare(args.package, args.parameter_file, args.parameter, name, kube.namespace,
                       base=spec_parameters(existing) if existing is not None else {}, fetched=fetched)
    if not installed:
        install_crds(kube)
        print("kplan CRDs installed")
    driver = Driver(kube, kube.namespace, name, lambda event: show(event, name), prepared.kinds)
    driver.start_warming()  # the caches' lists and watches go out while the Instance is recorded
    try:
        target = create(kube, prepared, name, args.plan) if existing is None else \
            change(kube, existing, prepared, args.plan)
    except BaseException:
        driver.stop()
        raise
    try:
        found, state = driver.drive(target, args.timeout)
    except Timeout as timeout:
        if driver.latest is None:
            raise
        print_tree(driver.latest, prepared.pkg, target.plan, sys.stdout)
        raise Timeout(f"{timeout}{standing(driver.latest, target.plan)}") from None
    plan = target.plan or str(((found.get("status") or {}).get("activePlan") or {}).get("name") or "")
    print_tree(found, prepared.pkg, plan or None, sys.stdout)
    return ended_with(found, state, plan or None)


def create(kube: Kube, prepared: Prepared, name: str, plan: str | None) -> Target:
    if plan not in (None, "deploy"):
        raise PermanentError(f"instance {name!r} does not exist yet: run without --plan to install it first")
    created, lines = record_instance(kube, prepared, name, runner=CLI, absent=True)
    for line in lines:
        print(line)
    return Target("deploy", None, int(created["metadata"].get("generation") or 0))


def change(kube: Kube, instance: Json, prepared: Prepared, plan: str | None) -> Target:
    """Move an existing Instance (driven by `kplan run`) to the package and values given; the run to wait for."""
    meta = instance.get("metadata") or {}
    if (meta.get("annotations") or {}).get(DRIVER_ANNOTATION) != CLI:
        raise PermanentError(f"instance {meta.get('name')!r} is driven by the manager; change it with update, "
                             "upgrade or plan trigger")
    pkg = prepared.pkg
    if plan is not None and plan not in pkg.plans:
        raise PermanentError(f"package {pkg.name} {pkg.operator_version} has no plan named {plan!r}")
    packages = packages_to_record(pkg, prepared.dependencies)
    check_versions(kube, packages, prepared.dependencies, kube.namespace)
    spec, wanted_plan = spec_change(kube, instance, prepared, plan)
    if wanted_plan is None:
        print(f"instance.kplan.dev/{meta.get('name')} unchanged")
        return Target(None, None, int(meta.get("generation") or 0))
    record_packages(kube, packages, kube.namespace, prepared.origins)
    patched = patch_spec(kube, instance, spec)
    given = f" ({parameter_text(pkg, prepared.given)})" if prepared.given else ""
    print(f"instance.kplan.dev/{meta.get('name')} changed{given}; plan {wanted_plan} runs")
    return target_after(instance, wanted_plan, patched)


def spec_change(kube: Kube, instance: Json, prepared: Prepared, plan: str | None) -> tuple[Json, str | None]:
    """The spec patch and the plan it runs: a requested plan, else an upgrade's, else the parameters' trigger."""
    pkg, current_pkg, current = prepared.pkg, package_of(kube, instance), spec_parameters(instance)
    spec: Json = {}
    wanted_plan = None
    if pkg.version_name != current_pkg.version_name:
        changes.upgrade_check(pkg, current_pkg)
        changes.immutables_kept(pkg, changes.resolved_or_given(current_pkg, current), prepared.given)
        spec["operatorVersion"], wanted_plan = {"name": pkg.version_name}, upgrade_plan(pkg)
    elif prepared.given:
        wanted_plan = changes.triggered_plan(pkg, current, {**current, **prepared.given})
    if prepared.given:
        spec["parameters"] = changes.parameters_patch(current, {**current, **prepared.given})
    if plan is not None:
        spec["planExecution"], wanted_plan = {"planName": plan, "uid": new_uid()}, plan
    return spec, wanted_plan


def new_uid() -> str:
    return str(uuid.uuid4())


def show(event: RunEvent, root: str) -> None:
    line = progress.event_line(event)
    print(line if event.instance == root else f"{event.instance}: {line}", flush=True)
