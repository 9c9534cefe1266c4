"""Building the typed model (engine.model) from parsed operator.yaml and params.yaml.

Builders are tolerant: entries of the wrong shape are left out rather than raising, so
verification can build a plan to look for cycles before everything else is known to be sound.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from engine.jsoncopy import copy_plain
from engine.model import (
    Expectation,
    Generated,
    GenerateKind,
    HealthExprs,
    HealthRule,
    Maintainer,
    Package,
    Parameter,
    ParamType,
    Phase,
    PipeFile,
    Plan,
    Step,
    Strategy,
    Task,
    TaskKind,
    WaitFor,
)
from engine.package.durations import parse_duration
from engine.package.walk import Docs, Node, parameters, plans, tasks

__all__ = ["build_package", "build_parameter", "build_plan", "build_task"]


def build_package(docs: Docs, files: Mapping[str, str]) -> Package:
    op = Node("operator.yaml", "", docs.operator.line, docs.operator)
    return Package(
        name=op.text("name") or "",
        operator_version=op.text("operatorVersion") or "",
        tasks=tuple(build_task(t) for t in tasks(docs)),
        plans=MappingProxyType({name: build_plan(name, node) for name, node in plans(docs)}),
        parameters=tuple(build_parameter(p) for p in parameters(docs)),
        templates=MappingProxyType(dict(sorted(docs.templates.items()))),
        app_version=op.text("appVersion"),
        kplan_version=op.text("kplanVersion"),
        description=op.text("description") or "",
        maintainers=tuple(Maintainer(m.text("name") or "", m.text("email") or "") for m in op.children("maintainers")),
        url=op.text("url"),
        upgradable_from=tuple(s for _, s in op.strings("upgradableFrom")),
        health=tuple(_health_rule(h) for h in op.children("health")),
        files=MappingProxyType(dict(sorted(files.items()))),
    )


def build_plan(name: str, node: Node) -> Plan:
    """A plan of the well-formed steps; repeated step names and unknown dependsOn names are dropped."""
    seen: set[str] = set()
    phases = []
    for phase in node.children("phases"):
        steps = []
        for s in phase.children("steps"):
            step_name = s.text("name")
            if step_name is not None and step_name not in seen:
                seen.add(step_name)
                steps.append(s)
        phases.append((phase, steps))
    return Plan(
        name=name,
        phases=tuple(
            Phase(name=phase.text("name") or "", steps=tuple(_step(s, seen) for s in steps), strategy=_strategy(phase))
            for phase, steps in phases
        ),
        strategy=_strategy(node),
    )


def _step(node: Node, known: set[str]) -> Step:
    return Step(
        name=node.text("name") or "",
        tasks=tuple(t for _, t in node.strings("tasks")),
        depends_on=tuple(dict.fromkeys(d for _, d in node.strings("dependsOn") if d in known)),
        timeout=parse_duration(node.value.get("timeout")) if "timeout" in node.value else None,
    )


def _strategy(node: Node) -> Strategy:
    value = node.text("strategy")
    return Strategy(value) if value in tuple(Strategy) else Strategy.SERIAL


def build_task(node: Node) -> Task:
    kind = node.text("kind")
    spec = node.child("spec") or Node(node.file, node.field("spec"), node.line, {})
    values = spec.child("parameters")
    return Task(
        name=node.text("name") or "",
        kind=TaskKind(kind) if kind in tuple(TaskKind) else TaskKind.DUMMY,
        resources=tuple(r for _, r in spec.strings("resources")),
        force=spec.value.get("force") is True,
        retries=_int(spec.value.get("retries"), 0),
        parameter=spec.text("parameter"),
        pod=spec.text("pod"),
        pipe=tuple(_pipe_file(p) for p in spec.children("pipe")),
        package=spec.text("package"),
        version=spec.text("version"),
        instance_name=spec.text("instanceName"),
        parameters=MappingProxyType(copy_plain(values.value) if values else {}),
        wait_for=tuple(WaitFor(w.text("resource") or "", w.text("condition") or "Ready") for w in spec.children("for")),
        timeout=parse_duration(spec.value["timeout"]) if "timeout" in spec.value else None,
        want_err=spec.value.get("wantErr") is True,
        fatal=spec.value.get("fatal") is True,
        done=spec.value.get("done") is not False,
    )


def _pipe_file(node: Node) -> PipeFile:
    return PipeFile(file=node.text("file") or "", kind=node.text("kind") or "ConfigMap", key=node.text("key") or "")


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _number(value: Any) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def build_parameter(node: Node) -> Parameter:
    has_default = "default" in node.value and node.value["default"] is not None
    kind = node.text("type") or ParamType.STRING.value
    required = node.value.get("required")
    enum = node.value.get("enum")
    generate = _generated(node.value.get("generate"))
    return Parameter(
        name=node.text("name") or "",
        type=ParamType(kind) if kind in tuple(ParamType) else ParamType.STRING,
        description=node.text("description") or "",
        default=copy_plain(node.value.get("default")),
        has_default=has_default,
        required=required if isinstance(required, bool) else not (has_default or generate),
        enum=tuple(copy_plain(e) for e in enum) if isinstance(enum, list) else None,
        minimum=_number(node.value.get("minimum")),
        maximum=_number(node.value.get("maximum")),
        pattern=node.text("pattern"),
        min_length=_count(node.value.get("minLength")),
        max_length=_count(node.value.get("maxLength")),
        immutable=node.value.get("immutable") is True,
        trigger=node.text("trigger"),
        secret=node.value.get("secret") is True or generate is not None,
        generate=generate,
    )


def _generated(value: Any) -> Generated | None:
    """`generate: {kind, length}` when its kind is known (verification reports the rest)."""
    if not isinstance(value, dict) or value.get("kind") not in tuple(GenerateKind):
        return None
    return Generated(GenerateKind(value["kind"]), _count(value.get("length")))


def _health_rule(node: Node) -> HealthRule:
    healthy, failed = node.child("healthy"), node.child("failed")
    current = node.text("current")
    return HealthRule(
        group=node.text("group") or "",
        kind=node.text("kind") or "",
        healthy=_expectation(healthy) if healthy else None,
        failed=_expectation(failed) if failed else None,
        exprs=HealthExprs(current, node.text("inProgress"), node.text("failed")) if current is not None else None,
    )


def _expectation(node: Node) -> Expectation:
    return Expectation(
        condition=node.text("condition"),
        status=node.text("status") or "True",
        json_path=node.text("jsonPath"),
        equals=copy_plain(node.value.get("equals")),
    )
