"""The objects `install`, `upgrade` and `run` record: Operator, OperatorVersion and Instance.

Recording is two passes so that a refusal creates nothing: `check_versions` finds every
OperatorVersion that exists with other content (or is needed and missing) before `record_packages`
creates anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.cli.cluster import GROUP_VERSION, OPERATOR_VERSION
from engine.cli.sources import Dependency
from engine.errors import PermanentError
from engine.kube import AlreadyExists, Kube
from engine.model import Package
from engine.package import loader
from engine.planner import FINALIZER

__all__ = [
    "DIGEST_ANNOTATION",
    "OPERATOR_LABEL",
    "SOURCE_ANNOTATION",
    "Origin",
    "check_versions",
    "instance_object",
    "operator_object",
    "operator_version_object",
    "packages_to_record",
    "record_checked",
    "record_packages",
]

OPERATOR_LABEL = "kplan.dev/operator"
RUNNER_ANNOTATION = "kplan.dev/runner"
SOURCE_ANNOTATION = "kplan.dev/source"  # on an OperatorVersion: the folder, URL or oci:// reference it came from
DIGEST_ANNOTATION = "kplan.dev/digest"  # on an OperatorVersion: sha256 of the package archive (or OCI manifest)


@dataclass(frozen=True)
class Origin:
    """Where a package came from and the digest it was checked against."""

    source: str
    digest: str

Json = dict[str, Any]


def operator_object(pkg: Package, namespace: str) -> Json:
    spec: Json = {"description": pkg.description}
    if pkg.maintainers:
        spec["maintainers"] = [{"name": m.name, **({"email": m.email} if m.email else {})} for m in pkg.maintainers]
    if pkg.url:
        spec["url"] = pkg.url
    if pkg.kplan_version:
        spec["kplanVersion"] = pkg.kplan_version
    return {"apiVersion": GROUP_VERSION, "kind": "Operator",
            "metadata": {"name": pkg.name, "namespace": namespace}, "spec": spec}


def operator_version_object(pkg: Package, namespace: str, origin: Origin | None = None) -> Json:
    spec: Json = {"operator": {"name": pkg.name}, "version": pkg.operator_version, "files": loader.to_files(pkg)}
    if pkg.app_version:
        spec["appVersion"] = pkg.app_version
    if pkg.kplan_version:
        spec["kplanVersion"] = pkg.kplan_version
    if pkg.upgradable_from:
        spec["upgradableFrom"] = list(pkg.upgradable_from)
    metadata: Json = {"name": pkg.version_name, "namespace": namespace, "labels": {OPERATOR_LABEL: pkg.name}}
    if origin is not None:
        notes = {SOURCE_ANNOTATION: origin.source, DIGEST_ANNOTATION: origin.digest}
        metadata["annotations"] = {k: v for k, v in notes.items() if v}
    return {"apiVersion": GROUP_VERSION, "kind": "OperatorVersion", "metadata": metadata, "spec": spec}


def instance_object(pkg: Package, name: str, namespace: str, given: Mapping[str, Any], *,
                    runner: str | None = None) -> Json:
    """The Instance: the given parameter values only (defaults stay in the package), optionally driven by `runner`.

    It carries kplan's finalizer from the start, which saves the engine a write on its first pass.
    """
    metadata: Json = {"name": name, "namespace": namespace, "labels": {OPERATOR_LABEL: pkg.name},
                      "finalizers": [FINALIZER]}
    if runner:
        metadata["annotations"] = {RUNNER_ANNOTATION: runner}
    spec = {"operatorVersion": {"name": pkg.version_name}, "parameters": dict(given)}
    return {"apiVersion": GROUP_VERSION, "kind": "Instance", "metadata": metadata, "spec": spec}


def packages_to_record(pkg: Package, deps: Sequence[Dependency]) -> list[Package]:
    """The package and every dependency found locally, once each, parents first."""
    found = {pkg.version_name: pkg}
    for dep in deps:
        if dep.pkg is not None:
            found.setdefault(dep.pkg.version_name, dep.pkg)
    return list(found.values())


def check_versions(kube: Kube, packages: Iterable[Package], deps: Sequence[Dependency], namespace: str) -> None:
    """Refuse when an OperatorVersion exists with other files, or a dependency is neither at hand nor installed."""
    for pkg in packages:
        live = kube.get(*OPERATOR_VERSION, pkg.version_name, namespace)
        if live is not None and ((live.get("spec") or {}).get("files") or {}) != loader.to_files(pkg):
            raise PermanentError(
                f"operatorversion {pkg.version_name} already exists with different content; bump operatorVersion"
            )
    for dep in deps:
        if dep.pkg is None and kube.get(*OPERATOR_VERSION, dep.version_name, namespace) is None:
            raise PermanentError(
                f"task {dep.task} installs OperatorVersion {dep.version_name!r}, which is neither beside the package "
                f"nor in namespace {namespace!r}; install that package first"
            )


def record_checked(kube: Kube, packages: Sequence[Package], deps: Sequence[Dependency], namespace: str,
                   origins: Mapping[str, Origin] | None = None) -> list[str]:
    """`check_versions`, then `record_packages`; for one package without dependencies in a round trip less, as
    `kubectl create` would: its OperatorVersion is created first, and only when one exists is it read and compared,
    so a refusal still creates nothing."""
    if len(packages) != 1 or deps:
        check_versions(kube, packages, deps, namespace)
        return record_packages(kube, packages, namespace, origins)
    pkg = packages[0]
    version = operator_version_object(pkg, namespace, (origins or {}).get(pkg.version_name))
    version_created = create_missing(kube, version)
    if not version_created:
        check_versions(kube, packages, deps, namespace)
    operator = operator_object(pkg, namespace)
    operator_created = create_missing(kube, operator)
    return [f"{obj['kind'].lower()}.kplan.dev/{obj['metadata']['name']} created"
            for obj, created in ((operator, operator_created), (version, version_created)) if created]


def record_packages(kube: Kube, packages: Iterable[Package], namespace: str,
                    origins: Mapping[str, Origin] | None = None) -> list[str]:
    """Create each missing Operator and OperatorVersion (annotated with its origin, by OperatorVersion name, when
    known); what was created, as `Kind name` lines."""
    created = []
    for pkg in packages:
        origin = (origins or {}).get(pkg.version_name)
        for obj in (operator_object(pkg, namespace), operator_version_object(pkg, namespace, origin)):
            if create_missing(kube, obj):
                created.append(f"{obj['kind'].lower()}.kplan.dev/{obj['metadata']['name']} created")
    return created


def create_missing(kube: Kube, obj: Mapping[str, Any]) -> bool:
    """Create `obj` unless an object of its name exists; True when it was created. The server's AlreadyExists
    tells that it exists: one round trip, not a read before the write."""
    try:
        kube.create(obj, same=same_as_sent(obj))
    except AlreadyExists:  # there already, or created meanwhile by someone else: as good
        return False
    return True


def same_as_sent(sent: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], bool]:
    """Whether an object found where `sent` was created is `sent` (its spec, labels and annotations): the create
    whose answer was lost, not someone else's."""
    meta = sent.get("metadata") or {}

    def same(found: Mapping[str, Any]) -> bool:
        live = found.get("metadata") or {}
        return found.get("spec") == sent.get("spec") and all(
            (live.get(part) or {}).get(key) == value
            for part in ("labels", "annotations") for key, value in (meta.get(part) or {}).items()
        )

    return same

