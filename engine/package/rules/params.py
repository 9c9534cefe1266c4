"""Rules on parameters: names, defaults and enums that fit the declaration, sane bounds, triggers."""

from __future__ import annotations

import re
from collections.abc import Iterator

from engine import generating, params
from engine.errors import Problem
from engine.model import Parameter, ParamType
from engine.package.build import build_parameter
from engine.package.rules.common import bad_names, duplicate_names, param_name_problem
from engine.package.source import line_of
from engine.package.walk import Docs, Node, parameters

__all__ = ["bounds", "defaults", "enums", "generated", "parameter_names", "patterns", "triggers"]

_NUMERIC = ((ParamType.INTEGER, ParamType.NUMBER), "integer and number")
_SIZED = ((ParamType.STRING, ParamType.ARRAY, ParamType.MAP), "string, array and map")
_APPLIES_TO = {
    "minimum": _NUMERIC,
    "maximum": _NUMERIC,
    "minLength": _SIZED,
    "maxLength": _SIZED,
    "pattern": ((ParamType.STRING,), "string"),
}


def parameter_names(docs: Docs) -> Iterator[Problem]:
    yield from bad_names(parameters(docs), param_name_problem)
    yield from duplicate_names(parameters(docs), "parameter name")


def defaults(docs: Docs) -> Iterator[Problem]:
    """A default must satisfy its own parameter's type, enum, bounds, pattern and lengths."""
    for node in parameters(docs):
        param = build_parameter(node)
        if param.has_default and _judgeable(node, param):
            reason = params.violation(param, param.default)
            if reason:
                yield Problem(node.file, node.line_at("default"), node.field("default"), reason)


def enums(docs: Docs) -> Iterator[Problem]:
    for node in parameters(docs):
        param = build_parameter(node)
        if not _judgeable(node, param):
            continue
        items = node.value.get("enum")
        for i, value in enumerate(param.enum or ()):
            reason = params.violation(_untyped_constraints(param), value)
            if reason:
                yield Problem(node.file, line_of(items, i), f"{node.field('enum')}[{i}]", reason)


def _judgeable(node: Node, param: Parameter) -> bool:
    """Values can be checked against a declaration only when its type and pattern are sound."""
    kind = node.value.get("type", ParamType.STRING.value)
    return kind in tuple(ParamType) and _pattern_error(param.pattern) is None


def _untyped_constraints(param: Parameter) -> Parameter:
    """The parameter with only its type left, to check enum entries against."""
    return Parameter(name=param.name, type=param.type)


def bounds(docs: Docs) -> Iterator[Problem]:
    """minimum <= maximum, minLength <= maxLength, and each only on the types it applies to."""
    for node in parameters(docs):
        param = build_parameter(node)
        yield from _order(node, "minimum", "maximum", param.minimum, param.maximum)
        yield from _order(node, "minLength", "maxLength", param.min_length, param.max_length)
        yield from _misplaced(node, param.type)


def _order(node: Node, low_key: str, high_key: str, low: float | None, high: float | None) -> Iterator[Problem]:
    if low is not None and high is not None and low > high:
        yield Problem(node.file, node.line_at(low_key), node.field(low_key), f"is greater than {high_key}")


def _misplaced(node: Node, kind: ParamType) -> Iterator[Problem]:
    for key, (fits, names) in _APPLIES_TO.items():
        if key in node.value and kind not in fits:
            message = f"applies only to {names} parameters, not {kind.value}"
            yield Problem(node.file, node.line_at(key), node.field(key), message, warning=True)


def patterns(docs: Docs) -> Iterator[Problem]:
    for node in parameters(docs):
        reason = _pattern_error(node.text("pattern"))
        if reason:
            yield Problem(node.file, node.line_at("pattern"), node.field("pattern"), reason)


def _pattern_error(pattern: str | None) -> str | None:
    if pattern is None:
        return None
    try:
        re.compile(pattern)
    except re.error as e:
        return f"is not a valid regular expression: {e}"
    return None


def triggers(docs: Docs) -> Iterator[Problem]:
    plans = docs.operator.get("plans")
    names = set(plans) if isinstance(plans, dict) else set()
    for node in parameters(docs):
        trigger = node.text("trigger")
        if trigger is not None and trigger not in names:
            message = f"names the plan {trigger!r}, which is not in operator.yaml"
            yield Problem(node.file, node.line_at("trigger"), node.field("trigger"), message)


def generated(docs: Docs) -> Iterator[Problem]:
    """A generated parameter is a string with no default, not required, and a length its kind allows."""
    for node in parameters(docs):
        param = build_parameter(node)
        if param.generate is None:
            continue
        where = node.field("generate")
        if param.type is not ParamType.STRING:
            yield Problem(node.file, node.line_at("generate"), where, "applies only to string parameters")
        if param.has_default:
            yield Problem(node.file, node.line_at("default"), node.field("default"),
                          "cannot be given with generate: a generated value is made when none is given")
        if node.value.get("required") is True:
            yield Problem(node.file, node.line_at("required"), node.field("required"),
                          "cannot be true with generate: a value is generated when none is given")
        reason = generating.length_problem(param.generate)
        if reason:
            generate = node.value.get("generate")
            yield Problem(node.file, line_of(generate, "length"), f"{where}.length", reason)
