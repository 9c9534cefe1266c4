"""Rules on the package's identity: apiVersion, name, operatorVersion and the version ranges."""

from __future__ import annotations

from collections.abc import Iterator

from engine import __version__
from engine.errors import Problem
from engine.package import versions
from engine.package.rules.common import dns_label_problem
from engine.package.source import line_of
from engine.package.walk import OPERATOR_FILE, PARAMS_FILE, Docs, Node

__all__ = ["api_versions", "operator_version", "package_name", "version_ranges"]

API_VERSION = "kplan.dev/v1alpha1"


def _operator(docs: Docs) -> Node:
    return Node(OPERATOR_FILE, "", docs.operator.line, docs.operator)


def api_versions(docs: Docs) -> Iterator[Problem]:
    for node in (_operator(docs), Node(PARAMS_FILE, "", docs.params.line, docs.params)):
        value = node.text("apiVersion")
        if value is not None and value != API_VERSION:
            yield Problem(node.file, node.line_at("apiVersion"), "apiVersion", f"must be {API_VERSION}, got {value!r}")


def package_name(docs: Docs) -> Iterator[Problem]:
    op = _operator(docs)
    name = op.text("name")
    reason = dns_label_problem(name) if name is not None else None
    if reason:
        yield Problem(OPERATOR_FILE, op.line_at("name"), "name", reason)


def operator_version(docs: Docs) -> Iterator[Problem]:
    op = _operator(docs)
    version = op.text("operatorVersion")
    if version is not None and not versions.is_version(version):
        yield Problem(
            OPERATOR_FILE,
            op.line_at("operatorVersion"),
            "operatorVersion",
            f"must be a semantic version such as 0.3.0, got {version!r}",
        )


def version_ranges(docs: Docs) -> Iterator[Problem]:
    """upgradableFrom and kplanVersion must parse; a kplanVersion this kplan misses is a warning."""
    op = _operator(docs)
    items = op.value.get("upgradableFrom")
    for i, text in op.strings("upgradableFrom"):
        yield from _range_problem(text, f"upgradableFrom[{i}]", line_of(items, i))
    wanted = op.text("kplanVersion")
    if wanted is None:
        return
    yield from _range_problem(wanted, "kplanVersion", op.line_at("kplanVersion"))
    if _parses(wanted) and not versions.satisfies(__version__, wanted):
        message = f"this kplan ({__version__}) is not in the range {wanted!r}"
        yield Problem(OPERATOR_FILE, op.line_at("kplanVersion"), "kplanVersion", message, warning=True)


def _parses(text: str) -> bool:
    try:
        versions.parse_range(text)
    except ValueError:
        return False
    return True


def _range_problem(text: str, field: str, line: int | None) -> Iterator[Problem]:
    try:
        versions.parse_range(text)
    except ValueError as e:
        yield Problem(OPERATOR_FILE, line, field, f"is not a version range: {e}")
