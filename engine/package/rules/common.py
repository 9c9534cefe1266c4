"""What several rules share: name formats and the duplicate-name check."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

from engine.errors import Problem
from engine.package.walk import Node

__all__ = ["bad_names", "dns_label_problem", "duplicate_names", "param_name_problem"]

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def dns_label_problem(name: str) -> str | None:
    """Why `name` is not a DNS-1123 label, or None."""
    if len(name) <= 63 and _DNS_LABEL.fullmatch(name):
        return None
    return (
        f"{name!r} is not a valid name: use at most 63 lower-case letters, digits and '-',"
        " starting and ending with a letter or digit"
    )


def param_name_problem(name: str) -> str | None:
    """Parameter names are used as `Params.NAME` in templates, so they must be identifiers."""
    if _PARAM_NAME.fullmatch(name):
        return None
    return f"{name!r} is not a valid parameter name: use letters, digits and '_', not starting with a digit"


def bad_names(nodes: Iterable[Node], why: Callable[[str], str | None]) -> Iterator[Problem]:
    for node in nodes:
        name = node.text("name")
        reason = why(name) if name is not None else None
        if reason:
            yield Problem(node.file, node.line_at("name"), node.field("name"), reason)


def duplicate_names(nodes: Iterable[Node], noun: str) -> Iterator[Problem]:
    """One Problem for every node whose name an earlier node already has."""
    first: dict[str, int | None] = {}
    for node in nodes:
        name = node.text("name")
        if name is None:
            continue
        if name in first:
            where = f" on line {first[name]}" if first[name] is not None else ""
            yield Problem(node.file, node.line_at("name"), node.field("name"), f"duplicates the {noun} {name!r}{where}")
        else:
            first[name] = node.line_at("name")
