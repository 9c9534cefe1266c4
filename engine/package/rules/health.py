"""Rules on package health rules: each names a kind, and each expectation is a condition or a JSON path, or the
rule is CEL expressions (current, inProgress, failed) that compile against the kind's schema when the package
ships its CRD."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

from engine.errors import Problem
from engine.package.walk import OPERATOR_FILE, Docs, Node

__all__ = ["duplicate_health_rules", "expectation_forms", "expectation_values", "health_expressions"]

_STATUSES = ("True", "False", "Unknown")
EXPRESSION_KEYS = ("current", "inProgress", "failed")
_CEL_ERROR = re.compile(r"^ERROR: <input>:(\d+):(\d+): (.*)$")


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


def _uses_expressions(rule: Node) -> bool:
    return "current" in rule.value or "inProgress" in rule.value or isinstance(rule.value.get("failed"), str)


def expectation_forms(docs: Docs) -> Iterator[Problem]:
    """A rule has healthy, failed or both, each {condition, status} or {jsonPath, equals}; or it has CEL
    expressions: current, and optionally inProgress and failed."""
    for rule in _rules(docs):
        if _uses_expressions(rule):
            yield from _expression_form(rule)
        elif "healthy" not in rule.value and "failed" not in rule.value:
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


def _expression_form(rule: Node) -> Iterator[Problem]:
    if "current" not in rule.value:
        yield _problem(rule, None, "needs current: the CEL expression that is true when the object is healthy")
    if "healthy" in rule.value:
        yield _problem(rule, "healthy", "goes with condition or jsonPath expectations; a rule of CEL expressions "
                                        "says current")
    if "failed" in rule.value and not isinstance(rule.value["failed"], str):
        yield _problem(rule, "failed", "must be a CEL expression in a rule with current or inProgress")


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


def health_expressions(docs: Docs) -> Iterator[Problem]:
    """Each CEL expression compiles with `self` (typed by the package's CRD for the kind, when it ships one) and
    gives true or false."""
    rules = [rule for rule in _rules(docs) if any(rule.text(key) is not None for key in EXPRESSION_KEYS)]
    if not rules:
        return
    from engine import cel  # only for packages with expressions: CEL's import is ~3 % of a command's start-up

    schemas = _crd_schemas(docs)  # read only for expressions: it parses every template
    for rule in rules:
        schema = schemas.get((rule.text("group") or "", rule.text("kind") or ""))
        variables = {"self": cel.resource_root(schema) if schema is not None else None}
        for key in EXPRESSION_KEYS:
            expression = rule.text(key)
            if expression is None:
                continue
            try:
                program = cel.compile_checked(expression, variables)
            except cel.CompileError as err:
                yield _problem(rule, key, f"is not a valid CEL expression: {_summary(str(err))}")
                continue
            kind = cel.result_type(program, variables)
            if kind not in ("bool", "dyn"):
                yield _problem(rule, key, f"must be a CEL expression that is true or false, but it gives {kind}")


def _summary(error: str) -> str:
    """The first error of cel's report as one sentence: `undefined field 'x' (line 1, column 5)`."""
    found = _CEL_ERROR.match(error.splitlines()[0] if error else "")
    if found is None:
        return error.splitlines()[0] if error else "unknown error"
    line, column, message = found.groups()
    return f"{message} (line {line}, column {column})"


def _crd_schemas(docs: Docs) -> dict[tuple[str, str], Mapping[str, Any]]:
    """(group, kind) → the storage version's openAPIV3Schema of every CRD among the package's plain templates."""
    found: dict[tuple[str, str], Mapping[str, Any]] = {}
    for text in docs.templates.values():
        try:
            documents = list(yaml.safe_load_all(text))
        except yaml.YAMLError:
            continue  # a Jinja template; its CRD is unknown until rendered
        for doc in documents:
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                spec = _mapping(doc.get("spec"))
                schema = _storage_schema(spec)
                names = _mapping(spec.get("names"))
                if schema is not None:
                    found[(str(spec.get("group") or ""), str(names.get("kind") or ""))] = schema
    return found


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _storage_schema(spec: Mapping[str, Any]) -> Mapping[str, Any] | None:
    versions = [v for v in spec.get("versions") or () if isinstance(v, dict)]
    version = next((v for v in versions if v.get("storage")), versions[0] if versions else None)
    schema = ((version or {}).get("schema") or {}).get("openAPIV3Schema")
    return schema if isinstance(schema, dict) else None
