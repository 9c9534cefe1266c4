"""Navigating parsed package documents: located nodes for tasks, plans, phases, steps, parameters.

Walkers skip entries of the wrong shape (the schema check reports those), so rules built on
them see only mappings and can stay short.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.package.schema import child_path
from engine.package.source import YMap, line_of

__all__ = [
    "OPERATOR_FILE",
    "PARAMS_FILE",
    "TEMPLATES_DIR",
    "Docs",
    "Node",
    "parameters",
    "plans",
    "steps",
    "tasks",
]

OPERATOR_FILE = "operator.yaml"
PARAMS_FILE = "params.yaml"
TEMPLATES_DIR = "templates/"


@dataclass(frozen=True)
class Docs:
    """What rules look at: both documents (empty mappings when unreadable) and the templates."""

    operator: YMap = field(default_factory=lambda: YMap(1))
    params: YMap = field(default_factory=lambda: YMap(1))
    templates: Mapping[str, str] = field(default_factory=dict)  # name under templates/ -> text
    broken: frozenset[str] = frozenset()  # documents that could not be read: only their parse error counts
    absent: frozenset[str] = frozenset()  # optional documents the package does not have (params.yaml)


@dataclass(frozen=True)
class Node:
    """A mapping in a document, with the file, field path and line it sits at."""

    file: str
    path: str
    line: int | None
    value: Mapping[Any, Any]

    def line_at(self, key: object) -> int | None:
        return line_of(self.value, key) if key in self.value else self.line

    def field(self, key: object) -> str:
        return child_path(self.path, key)

    def text(self, key: str) -> str | None:
        value = self.value.get(key)
        return value if isinstance(value, str) else None

    def strings(self, key: str) -> list[tuple[int, str]]:
        """(index, text) of the string items of the list under `key`."""
        items = self.value.get(key)
        if not isinstance(items, list):
            return []
        return [(i, s) for i, s in enumerate(items) if isinstance(s, str)]

    def child(self, key: str) -> Node | None:
        value = self.value.get(key)
        return Node(self.file, self.field(key), self.line_at(key), value) if isinstance(value, dict) else None

    def children(self, key: str) -> list[Node]:
        """The mapping items of the list under `key`."""
        items = self.value.get(key)
        if not isinstance(items, list):
            return []
        path = self.field(key)
        return [
            Node(self.file, child_path(path, i), line_of(items, i), item)
            for i, item in enumerate(items)
            if isinstance(item, dict)
        ]


def tasks(docs: Docs) -> list[Node]:
    return Node(OPERATOR_FILE, "", docs.operator.line, docs.operator).children("tasks")


def parameters(docs: Docs) -> list[Node]:
    return Node(PARAMS_FILE, "", docs.params.line, docs.params).children("parameters")


def plans(docs: Docs) -> list[tuple[str, Node]]:
    """(name, node) of every plan whose name is a string and whose body is a mapping."""
    table = docs.operator.get("plans")
    if not isinstance(table, dict):
        return []
    return [
        (name, Node(OPERATOR_FILE, child_path("plans", name), line_of(table, name), body))
        for name, body in table.items()
        if isinstance(name, str) and isinstance(body, dict)
    ]


def steps(plan: Node) -> list[Node]:
    """Every step of a plan, across its phases, in declaration order."""
    return [step for phase in plan.children("phases") for step in phase.children("steps")]
