"""Builders shared by the render tests: packages made straight from the model dataclasses."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from engine.model import Package, Phase, Plan, Step, Strategy, Task, TaskKind
from engine.render import Limits, RenderContext

SMALL = Limits(max_output=200_000, max_items=5_000, max_range=5_000, max_operations=50_000, max_int_bits=512)


def package(
    templates: Mapping[str, str],
    tasks: tuple[Task, ...] = (),
    plans: Mapping[str, Plan] | None = None,
    app_version: str | None = "7.2.4",
) -> Package:
    return Package(
        name="redis",
        operator_version="0.3.0",
        tasks=tasks,
        plans=MappingProxyType(dict(plans or {})),
        templates=MappingProxyType(dict(templates)),
        app_version=app_version,
    )


def context(params: Mapping[str, Any] | None = None, uid: str | None = "uid-1", **extra: Any) -> RenderContext:
    return RenderContext(instance="cache", namespace="shop", params=dict(params or {}), instance_uid=uid, **extra)


def apply(name: str, *files: str) -> Task:
    return Task(name=name, kind=TaskKind.APPLY, resources=files)


def serial_plan(name: str, *steps: tuple[str, tuple[str, ...]]) -> Plan:
    return Plan(name, (Phase("main", tuple(Step(step, tasks) for step, tasks in steps), Strategy.SERIAL),))


def configmap(name: str, body: str = "data: {}") -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{body}\n"
