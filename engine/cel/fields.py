"""Field selections of a CEL expression checked against the OpenAPI schema of its variables.

cel-expr-python types `self` as dyn; the API server types it from the CRD's structural schema, so
`self.spec.nope` is a compile error there (`undefined field 'nope'`). This finds the plain selection chains
(`self.a.b`, also inside `has()`) and reports what the checker of cel-go would, at the same place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.cel.programs import blank_strings
from engine.cel.values import RESERVED

__all__ = ["Located", "chain_type", "field_errors", "render"]

Schema = Mapping[str, Any]
_CHAIN = re.compile(r"(?<![\w.])([A-Za-z_][A-Za-z0-9_]*)((?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)+)(\s*\()?")
_SELECTION = re.compile(r"\s*(\.)\s*([A-Za-z_][A-Za-z0-9_]*)")
_ESCAPES = {"__dash__": "-", "__dot__": ".", "__slash__": "/", "__underscores__": "__"}
_CEL_TYPES = {"string": "string", "integer": "int", "number": "double", "boolean": "bool"}
_OBJECT_ROOT: dict[str, Any] = {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                                "metadata": {"type": "object", "properties": {"name": {"type": "string"},
                                                                             "generateName": {"type": "string"}}}}


@dataclass(frozen=True)
class Located:
    """A problem at an offset of the source."""

    offset: int
    message: str


class _Open:
    """A place whose type is dynamic: anything may be selected below it."""


OPEN = _Open()


def unescape(name: str) -> str:
    """A property name as CEL spells it (`foo__dash__bar`, `__namespace__`) back to the schema's."""
    if name.startswith("__") and name.endswith("__") and name[2:-2] in RESERVED:
        return name[2:-2]
    for escaped, plain in _ESCAPES.items():
        name = name.replace(escaped, plain)
    return name


def resource_root(schema: Schema) -> Schema:
    """A custom resource's root schema as CEL sees it: apiVersion, kind and metadata.name/generateName added."""
    return {**schema, "type": "object", "properties": {**(schema.get("properties") or {}), **_OBJECT_ROOT}}


def select(node: Schema | _Open, name: str) -> Schema | _Open | str:
    """The schema of `node.name`, OPEN when unknown, or the checker's complaint."""
    if isinstance(node, _Open) or node.get("x-kubernetes-preserve-unknown-fields") \
            or node.get("x-kubernetes-int-or-string"):
        return OPEN
    if node.get("x-kubernetes-embedded-resource"):
        node = resource_root(node)
    kind = node.get("type")
    if kind in _CEL_TYPES:
        return f"type '{_CEL_TYPES[kind]}' does not support field selection"
    if kind not in ("object", None):
        return OPEN
    properties = node.get("properties")
    if isinstance(properties, Mapping) and properties:
        found = properties.get(unescape(name))
        return found if isinstance(found, Mapping) else f"undefined field '{name}'"
    extra = node.get("additionalProperties")
    if isinstance(extra, Mapping):
        return extra
    if extra is True or kind is None:
        return OPEN
    return f"undefined field '{name}'"


_MAP_KEY: Schema = {"type": "string"}
_MACRO = re.compile(r"\.\s*(?:all|exists|exists_one|map|filter)\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*,")


def _resolve(node: Schema | _Open, chain: str) -> Schema | _Open | None:
    """The schema a selection chain (`.a.b`) reaches from `node`, None when it is not allowed."""
    for selection in _SELECTION.finditer(chain):
        step = select(node, selection.group(2))
        if isinstance(step, str):
            return None
        node = step
    return node


def macro_variables(source: str, schemas: Mapping[str, Schema | None]) -> dict[str, Schema | None]:
    """Schemas of macro variables (`self.items.all(i, ...)`: `i` is an item); a name bound twice stays unknown."""
    text = blank_strings(source)
    bound: dict[str, Schema | None] = {}
    for _ in range(3):  # nested macros bind through the variables of the outer ones
        known = {**schemas, **bound}
        for match in _CHAIN.finditer(text):
            root = known.get(match.group(1))
            last = match.group(2).rfind(".")
            macro = _MACRO.match(text, match.start(2) + last)
            if root is None or macro is None:
                continue
            target = _resolve(root, match.group(2)[:last])
            element = _element(target) if target is not None else None
            name = macro.group(1)
            bound[name] = element if bound.get(name, element) is element and name not in schemas else None
    return bound


def _element(node: Schema | _Open) -> Schema | None:
    """What a macro iterates over: a list's items, a map's keys (strings)."""
    if isinstance(node, _Open):
        return None
    items = node.get("items")
    if node.get("type") == "array" and isinstance(items, Mapping):
        return items
    if node.get("type") == "object" and not node.get("properties"):
        return _MAP_KEY
    return None


def field_errors(source: str, schemas: Mapping[str, Schema | None]) -> list[Located]:
    """Selections below a variable (or a macro variable over it) that its schema does not allow."""
    found: list[Located] = []
    schemas = {**schemas, **macro_variables(source, schemas)}
    for match in _CHAIN.finditer(blank_strings(source)):
        root = schemas.get(match.group(1))
        if root is None:
            continue
        node: Schema | _Open = root
        selections = list(_SELECTION.finditer(match.group(2)))
        if match.group(3):
            selections = selections[:-1]  # the last name is a method call
        for selection in selections:
            step = select(node, selection.group(2))
            if isinstance(step, str):
                found.append(Located(match.start(2) + selection.start(1), step))
                break
            node = step
    return found


def chain_type(source: str, schemas: Mapping[str, Schema | None]) -> str | None:
    """The schema type of an expression that is one plain selection chain (`self.spec.size`), else None."""
    match = _CHAIN.fullmatch(blank_strings(source).strip())
    if match is None or match.group(3) or schemas.get(match.group(1)) is None:
        return None
    node: Schema | _Open | str = schemas[match.group(1)] or OPEN
    for selection in _SELECTION.finditer(match.group(2)):
        if isinstance(node, str | _Open):
            return None
        node = select(node, selection.group(2))
    return None if isinstance(node, str | _Open) else node.get("type")


def render(source: str, problems: list[Located]) -> str:
    """cel-go's display of errors: `ERROR: <input>:line:col: message`, the line, and a caret under the place."""
    lines = []
    for problem in sorted(problems, key=lambda p: p.offset):
        before = source[:problem.offset]
        line = before.count("\n") + 1
        column = problem.offset - (before.rfind("\n") + 1)
        text = source.split("\n")[line - 1].replace("\t", " ")
        lines.append(f"ERROR: <input>:{line}:{column + 1}: {problem.message}\n | {text}\n | {'.' * column}^")
    return "\n".join(lines)
