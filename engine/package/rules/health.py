"""Rules on package health rules: each names a kind, and each expectation is a condition or a JSON path."""

from __future__ import annotations

from collections.abc import Iterator

from engine.errors import Problem
from engine.package.walk import OPERATOR_FILE, Docs, Node

__all__ = ["duplicate_health_rules", "expectation_forms", "expectation_values"]

_STATUSES = ("True", "False", "Unknown")


def _rules(docs: Docs) -> list[Node]:
    return Node(OPERATOR_FILE, "", docs.operator.line, docs.operator).children("health")


def _expectations(docs: Docs) -> Iterator[Node]:
    for rule in _rules(docs):
        for key in ("healthy", "failed"):
            expectation = rule.child(key)
            if expectation is not None:
                yield expectation


def _problem(node: Node, key: str | None, message: str) -> Problem:
    if key is None:
        return Problem(OPERATOR_FILE, node.line, node.path, message)
    return Problem(OPERATOR_FILE, node.line_at(key), node.field(key), message)


def expectation_forms(docs: Docs) -> Iterator[Problem]:
    """A rule has healthy, failed or both; each is {condition, status} or {jsonPath, equals}."""
    for rule in _rules(docs):
        if "healthy" not in rule.value and "failed" not in rule.value:
            yield _problem(rule, None, "needs healthy, failed or both")
    for node in _expectations(docs):
        has = {k: k in node.value for k in ("condition", "status", "jsonPath", "equals")}
        if has["condition"] == has["jsonPath"]:
            yield _problem(node, None, "needs exactly one of condition and jsonPath")
        elif has["jsonPath"] and not has["equals"]:
            yield _problem(node, None, "needs equals: the value expected at jsonPath")
        if has["condition"] and has["equals"]:
            yield _problem(node, "equals", "goes with jsonPath, not condition")
        if has["jsonPath"] and has["status"]:
            yield _problem(node, "status", "goes with condition, not jsonPath")


def expectation_values(docs: Docs) -> Iterator[Problem]:
    for node in _expectations(docs):
        status = node.text("status")
        if status is not None and status not in _STATUSES:
            yield _problem(node, "status", f"must be True, False or Unknown, got {status!r}")
        path = node.text("jsonPath")
        if path is not None and not path.startswith("."):
            yield _problem(node, "jsonPath", f"must start with '.', as in .status.phase, got {path!r}")


def duplicate_health_rules(docs: Docs) -> Iterator[Problem]:
    first: dict[tuple[str, str], int | None] = {}
    for rule in _rules(docs):
        kind, group = rule.text("kind"), rule.text("group") or ""
        if kind is None:
            continue
        if (group, kind) in first:
            where = first[group, kind]
            yield _problem(rule, "kind", f"duplicates the health rule for {kind}.{group or 'core'} on line {where}")
        else:
            first[group, kind] = rule.line_at("kind")
