"""Everything checked before the cluster is touched: the package, the parameter values, every plan's render."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from engine import generating, params
from engine.cli.records import Origin
from engine.cli.sources import Dependency, Fetched, dependencies, load_package
from engine.errors import KplanError, PermanentError, RenderError
from engine.model import Package
from engine.planner import pipes, secrets
from engine.planner.rendering import Scene, render_plan
from engine.planner.stamping import Owner

__all__ = ["Prepared", "check_name", "check_renders", "declared_only", "given_values", "prepare", "secrets_hidden"]

DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


Kind = tuple[str, str]  # (apiVersion, kind)


@dataclass(frozen=True)
class Prepared:
    """A package ready to install: the values given (for spec.parameters), all values resolved, dependencies."""

    source: str
    pkg: Package
    given: dict[str, Any]
    values: dict[str, Any]
    dependencies: tuple[Dependency, ...]
    origin: Origin | None = None
    notes: tuple[str, ...] = ()  # how the package was chosen (repositories), for the user
    kinds: frozenset[Kind] = frozenset()  # (apiVersion, kind) of the objects its plans apply or wait for

    @property
    def origins(self) -> dict[str, Origin]:
        """Where each package to record came from, by OperatorVersion name: the package's own origin, and that of
        each dependency fetched from its repository or registry."""
        found = {d.version_name: Origin(d.source, d.digest) for d in self.dependencies if d.source}
        return {**found, self.pkg.version_name: self.origin} if self.origin else found


def given_values(pkg: Package, parameter_file: str | None, assignments: Sequence[str]) -> dict[str, Any]:
    """Values from `-P FILE`, overridden by `-p NAME=VALUE`, typed by the package's declarations."""
    given: dict[str, Any] = {}
    if parameter_file:
        given.update(params.load_file(pkg, parameter_file))
    given.update(params.parse_assignments(pkg, assignments))
    return given


def check_renders(pkg: Package, instance: str, namespace: str, values: Mapping[str, Any]) -> frozenset[Kind]:
    """Render every plan as the engine will (pipes not produced yet); a RenderError names the plan. The kinds
    (apiVersion, kind) of the objects the plans apply or wait for."""
    owner = Owner(instance, namespace, "", pkg.name)
    scene = Scene(owner, values, pipes.pipe_values(pkg, owner, {}))
    kinds: set[Kind] = set()
    for name in sorted(pkg.plans):
        try:
            rendered = render_plan(pkg, pkg.plans[name], scene)
        except RenderError as err:
            raise RenderError(err.file, err.line, f"{err.reason} (plan {name})") from None
        for task in rendered.values():
            kinds.update((str(o.get("apiVersion")), str(o.get("kind"))) for o in task.objects)
            kinds.update((ref.api_version, ref.kind) for ref, _condition in task.waits)
    return frozenset(kinds)


def prepare(source: str, parameter_file: str | None, assignments: Sequence[str], instance: str | None,
            namespace: str, base: Mapping[str, Any] | None = None, fetched: Fetched | None = None, *,
            plain_http: bool = False, running: str | None = None) -> Prepared:
    """Fetch and verify the package (unless given), type and validate the values, render every plan, find
    dependencies. `base`: values the Instance has already (a change keeps those the package still declares);
    `running`: the version an upgrade starts from (a repository package is chosen to upgrade from it).
    """
    fetched = fetched or load_package(source, plain_http=plain_http, running=running)
    pkg = fetched.pkg
    name = instance or pkg.name
    check_name(name)
    with secrets_hidden(pkg, assignments, base):
        given = given_values(pkg, parameter_file, assignments)
        values = params.resolve(pkg, {**declared_only(pkg, base or {}), **given})
        stand_ins = with_stand_ins(pkg, values)
        kinds = check_renders(pkg, name, namespace, stand_ins)
        deps = dependencies(pkg, source, stand_ins, name, namespace, plain_http=plain_http)
    origin = Origin(fetched.source, fetched.digest)
    return Prepared(source, pkg, given, values, tuple(deps), origin, fetched.notes, kinds)


def with_stand_ins(pkg: Package, values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` with a throw-away value for each generated parameter that has none, to render with: the engine
    makes the real one when it first plans the Instance, and keeps it in a Secret."""
    return {**values, **{p.name: generating.make(p.generate) for p in pkg.parameters
                         if p.generate is not None and values.get(p.name) is None}}


def declared_only(pkg: Package, values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` without the names `pkg` does not declare."""
    declared = {p.name for p in pkg.parameters}
    return {k: v for k, v in values.items() if k in declared}


def check_name(name: str) -> None:
    if not DNS_LABEL.fullmatch(name):
        raise PermanentError(f"instance name {name!r} is not valid: use at most 63 lower-case letters, digits and '-'")


@contextmanager
def secrets_hidden(pkg: Package, assignments: Sequence[str], values: Mapping[str, Any] | None = None) -> Iterator[None]:
    """Errors raised inside never show a secret value (parameter refusals do not quote one in the first place)."""
    try:
        yield
    except KplanError as err:
        texts = secret_texts(pkg, assignments, values or {})
        if texts and any(t in str(err) for t in texts):
            raise PermanentError(secrets.scrub(str(err), texts)) from None
        raise


def secret_names(pkg: Package) -> frozenset[str]:
    return frozenset(p.name for p in pkg.parameters if p.secret)


def secret_texts(pkg: Package, assignments: Sequence[str], values: Mapping[str, Any]) -> tuple[str, ...]:
    """Secret values as given on the command line (`-p password=...`) and in `values`."""
    names = secret_names(pkg)
    raw = {name: text for name, _, text in (a.partition("=") for a in assignments) if name in names}
    return tuple(sorted(set(secrets.secret_texts(pkg, raw)) | set(secrets.secret_texts(pkg, values)),
                        key=lambda t: (-len(t), t)))
