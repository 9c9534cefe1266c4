"""Rules on package health rules: each names a kind, and each expectation is a condition or a JSON path."""

from __future__ import annotations

from collections.abc import Iterator

from engine.errors import Problem
from engine.package.walk import OPERATOR_FILE, Docs, Node

__all__ = ["health_rules"]

_STATUSES = ("True", "False", "Unknown")


def _rules(docs: Docs) -> list[Node]:
    return Node(OPERATOR_FILE, "", docs.operator.line, docs.operator).children("health")


def health_rules(docs: Docs) -> Iterator[Problem]:
    first: dict[tuple[str, str], int | None] = {}
    for rule in _rules(docs):
        if "healthy" not in rule.value and "failed" not in rule.value:
            yield Problem(OPERATOR_FILE, rule.line, rule.path, "needs healthy, failed or both")
        for key in ("healthy", "failed"):
            expectation = rule.child(key)
            if expectation is not None:
                yield from _expectation(expectation)
        kind = rule.text("kind")
        if kind is None:
            continue
        group = rule.text("group") or ""
        if (group, kind) in first:
            message = f"duplicates the health rule for {kind}.{group or 'core'} on line {first[group, kind]}"
            yield Problem(OPERATOR_FILE, rule.line_at("kind"), rule.field("kind"), message)
        else:
            first[group, kind] = rule.line_at("kind")


def _expectation(node: Node) -> Iterator[Problem]:
    has = {k: k in node.value for k in ("condition", "status", "jsonPath", "equals")}
    where = (OPERATOR_FILE, node.line, node.path)
    if has["condition"] == has["jsonPath"]:
        yield Problem(*where, "needs exactly one of condition and jsonPath")
    if has["condition"] and has["equals"]:
        yield Problem(OPERATOR_FILE, node.line_at("equals"), node.field("equals"), "goes with jsonPath, not condition")
    if has["jsonPath"] and has["status"]:
        yield Problem(OPERATOR_FILE, node.line_at("status"), node.field("status"), "goes with condition, not jsonPath")
    if has["jsonPath"] and not has["condition"] and not has["equals"]:
        yield Problem(*where, "needs equals: the value expected at jsonPath")
    status = node.text("status")
    if status is not None and status not in _STATUSES:
        message = f"must be True, False or Unknown, got {status!r}"
        yield Problem(OPERATOR_FILE, node.line_at("status"), node.field("status"), message)
    path = node.text("jsonPath")
    if path is not None and not path.startswith("."):
        message = f"must start with '.', as in .status.phase, got {path!r}"
        yield Problem(OPERATOR_FILE, node.line_at("jsonPath"), node.field("jsonPath"), message)
