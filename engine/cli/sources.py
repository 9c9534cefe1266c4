"""Packages named on the command line, and the packages their Operator tasks install (resolved beside them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine import params, render
from engine.cli import kudo
from engine.errors import KplanError, PermanentError, TransientError
from engine.model import Package, TaskKind
from engine.package import loader
from engine.planner import children
from engine.repo import fetching
from engine.repo.fetching import Fetched

__all__ = ["Dependency", "Fetched", "dependencies", "is_reference", "load_package"]

is_reference = fetching.is_reference


def load_package(source: str, *, plain_http: bool = False, running: str | None = None) -> Fetched:
    """The verified package `source` names (folder, .tgz, URL, repository package or oci:// artifact), with its
    origin and digest; `running`: the version an upgrade starts from. A local KUDO package is converted in memory
    (with a one-line notice on stderr)."""
    local = Path(source)
    if not is_reference(source) and local.exists() and kudo.is_kudo_package(loader.read_files(source)):
        return Fetched(loader.from_files(kudo.read_package_files(source), source), str(local.resolve()), "")
    return fetching.fetch(source, plain_http=plain_http, running=running)


@dataclass(frozen=True)
class Dependency:
    """A package an Operator task installs: `pkg` when found beside the parent, else only its OperatorVersion name;
    `source` and `digest` when it was fetched from the parent's repository or registry."""

    task: str
    version_name: str
    pkg: Package | None
    source: str = ""
    digest: str = ""


def dependencies(pkg: Package, source: str, values: Mapping[str, Any], instance: str, namespace: str,
                 seen: frozenset[str] = frozenset(), *, plain_http: bool = False) -> list[Dependency]:
    """Every package the Operator tasks of `pkg` (and of those packages, recursively) name, parents first: from the
    same repository or registry when `source` is a reference to one (checked by digest), else beside the folder."""
    found: list[Dependency] = []
    for task in (t for t in pkg.tasks if t.kind is TaskKind.OPERATOR):
        ctx = render.RenderContext(instance=instance, namespace=namespace, params=values)
        child = children.child_instance(pkg, task, ctx)
        wanted = str(child["spec"]["operatorVersion"]["name"])
        name = children.text(pkg, task.package or "", ctx, f"task {task.name} package")
        version = children.text(pkg, task.version or "", ctx, f"task {task.name} version")
        remote = fetching.reference_beside(source, name, version)
        fetched = fetch_dependency(task.name, source, remote, plain_http) if remote is not None else None
        where: str | Path | None = remote if remote is not None else local_child(source, name)
        dep = fetched.pkg if fetched else (
            loader.from_files(kudo.read_package_files(str(where), quiet=True), str(where)) if where else None)
        if dep is not None and dep.version_name != wanted:
            raise PermanentError(
                f"task {task.name} installs OperatorVersion {wanted!r}, but the package at {where} is "
                f"{dep.name} {dep.operator_version}"
            )
        found.append(Dependency(task.name, wanted, dep, *((fetched.source, fetched.digest) if fetched else ())))
        if dep is not None and where is not None and dep.version_name not in seen:
            child_values = child_parameters(task.name, dep, child["spec"]["parameters"])
            found += dependencies(dep, str(where), child_values, str(child["metadata"]["name"]), namespace,
                                  seen | {pkg.version_name, dep.version_name}, plain_http=plain_http)
    return found


def fetch_dependency(task: str, parent: str, reference: str, plain_http: bool) -> Fetched:
    """The package `reference` names, fetched and checked like the parent; a failure says which task wanted it."""
    try:
        return fetching.fetch(reference, plain_http=plain_http)
    except KplanError as err:
        kind = TransientError if isinstance(err, TransientError) else PermanentError
        raise kind(f"task {task} of {parent} installs {reference}, which cannot be had: {err}") from None


def local_child(source: str, name: str) -> Path | None:
    """The folder of package `name` beside the parent's folder, else where the KUDO repositories have it."""
    folder = local_folder(source)
    return (beside(folder, name) if folder is not None else None) or kudo.find_child(name, source)


def child_parameters(task: str, dep: Package, given: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters an Operator task gives its child, resolved against the child's package."""
    try:
        return params.resolve(dep, given)
    except PermanentError as err:
        raise PermanentError(f"task {task} gives package {dep.name} a bad parameter: {err}") from None


def local_folder(source: str) -> Path | None:
    """The folder a package was read from, None for archives and URLs (their dependencies must be installed)."""
    path = Path(source)
    return path if path.is_dir() else None


def beside(folder: Path, name: str) -> Path | None:
    """`name` as a path relative to the package folder, else a sibling folder of that name."""
    for candidate in (folder / name, folder.parent / name):
        if name and (candidate / "operator.yaml").is_file():
            return candidate
    return None
