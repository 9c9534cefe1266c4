"""The schema rule: unknown fields, missing required fields and values of the wrong kind."""

from __future__ import annotations

from collections.abc import Iterator

from engine.errors import Problem
from engine.package import schema
from engine.package.walk import OPERATOR_FILE, PARAMS_FILE, Docs

__all__ = ["shape"]


def shape(docs: Docs) -> Iterator[Problem]:
    skip = docs.broken | docs.absent
    if OPERATOR_FILE not in skip:
        yield from schema.check(OPERATOR_FILE, docs.operator, schema.OPERATOR, "", docs.operator.line)
    if PARAMS_FILE not in skip:
        yield from schema.check(PARAMS_FILE, docs.params, schema.PARAMS, "", docs.params.line)
