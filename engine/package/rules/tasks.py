"""Rules on tasks: names, the spec each kind takes, and what specs refer to (templates, parameters)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from engine.errors import Problem
from engine.model import ParamType, TaskKind
from engine.package import schema
from engine.package.rules.common import bad_names, dns_label_problem, duplicate_names
from engine.package.source import line_of
from engine.package.walk import PARAMS_FILE, Docs, Node, parameters, tasks

__all__ = [
    "pipe_keys",
    "task_names",
    "task_specs",
    "task_templates",
    "template_references",
    "toggle_parameters",
    "wait_resources",
]

_TEMPLATE_SUFFIXES = (".yaml", ".yml")
_KIND_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*(\.[a-z0-9.-]+)?/[a-z0-9]([-a-z0-9.]*[a-z0-9])?")
_CONFIG_KEY = re.compile(r"[-._a-zA-Z0-9]+")


def task_names(docs: Docs) -> Iterator[Problem]:
    yield from bad_names(tasks(docs), dns_label_problem)
    yield from duplicate_names(tasks(docs), "task name")


def _kind(task: Node) -> TaskKind | None:
    kind = task.text("kind")
    return TaskKind(kind) if kind in tuple(TaskKind) else None


def _spec(task: Node) -> Node:
    return task.child("spec") or Node(task.file, task.field("spec"), task.line, {})


def task_specs(docs: Docs) -> Iterator[Problem]:
    """Each task's spec has the fields of its kind (DESIGN §2 "Tasks")."""
    for task in tasks(docs):
        kind = _kind(task)
        if kind is not None and ("spec" not in task.value or task.child("spec") is not None):
            spec = _spec(task)
            yield from schema.check(task.file, spec.value, schema.TASK_SPECS[kind], spec.path, spec.line)


def template_references(task: Node) -> list[tuple[str, int | None, str]]:
    """(field, line, file) for every template file a task names."""
    spec = _spec(task)
    items = spec.value.get("resources")
    refs = [(f"{spec.field('resources')}[{i}]", line_of(items, i), r) for i, r in spec.strings("resources")]
    pod = spec.text("pod")
    if pod is not None:
        refs.append((spec.field("pod"), spec.line_at("pod"), pod))
    for wait in spec.children("for"):
        resource = wait.text("resource")
        if resource is not None and resource.endswith(_TEMPLATE_SUFFIXES):
            refs.append((wait.field("resource"), wait.line_at("resource"), resource))
    return refs


def task_templates(docs: Docs) -> Iterator[Problem]:
    for task in tasks(docs):
        for field, line, file in template_references(task):
            if file not in docs.templates:
                yield Problem(task.file, line, field, f"names the template {file!r}, which is not in templates/")


def wait_resources(docs: Docs) -> Iterator[Problem]:
    for task in tasks(docs):
        if _kind(task) is not TaskKind.WAIT:
            continue
        for wait in _spec(task).children("for"):
            resource = wait.text("resource")
            if resource is None or resource.endswith(_TEMPLATE_SUFFIXES) or _KIND_NAME.fullmatch(resource):
                continue
            message = f"must name a template file (*.yaml) or an object as kind/name, got {resource!r}"
            yield Problem(task.file, wait.line_at("resource"), wait.field("resource"), message)


def pipe_keys(docs: Docs) -> Iterator[Problem]:
    """Pipe keys become ConfigMap/Secret keys and `Pipes.KEY`: valid and unique in the package."""
    first: dict[str, int | None] = {}
    for task in tasks(docs):
        if _kind(task) is not TaskKind.PIPE:
            continue
        for pipe in _spec(task).children("pipe"):
            key, line = pipe.text("key"), pipe.line_at("key")
            if key is None:
                continue
            if not _CONFIG_KEY.fullmatch(key):
                message = f"{key!r} is not a valid key: use letters, digits, '-', '_' and '.'"
                yield Problem(task.file, line, pipe.field("key"), message)
            elif key in first:
                message = f"duplicates the pipe key {key!r} on line {first[key]}"
                yield Problem(task.file, line, pipe.field("key"), message)
            else:
                first[key] = line


def toggle_parameters(docs: Docs) -> Iterator[Problem]:
    """A Toggle task switches on a boolean parameter that params.yaml declares."""
    declared = {p.text("name"): p for p in parameters(docs)}
    for task in tasks(docs):
        if _kind(task) is not TaskKind.TOGGLE:
            continue
        spec = _spec(task)
        name = spec.text("parameter")
        if name is None:
            continue
        where = (task.file, spec.line_at("parameter"), spec.field("parameter"))
        if name not in declared:
            yield Problem(*where, f"names the parameter {name!r}, which is not in {PARAMS_FILE}")
            continue
        kind = declared[name].text("type") or ParamType.STRING.value
        if kind != ParamType.BOOLEAN:
            yield Problem(*where, f"names the parameter {name!r} of type {kind}; Toggle needs a boolean parameter")
