"""Walks over objects along their JSON schema: unknown fields, type errors, CR validation and defaults.

The schema is either a built-in definition (with `$ref`s into the 1.37 definitions) or a CRD's
structural schema, whose `metadata` is read as ObjectMeta whatever the CRD declares (§6).
"""

from __future__ import annotations

import datetime
import re
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from engine.apiserver.objects import copy_json
from engine.apiserver.requests import type_name
from engine.apiserver.status import ErrorType, FieldError
from engine.apiserver.unchanged import NOTHING, Unchanged

Schema = Mapping[str, Any]
T = TypeVar("T")
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_EMBEDDED_KEYS = ("apiVersion", "kind", "metadata")


@dataclass(frozen=True)
class SchemaView:
    """A root schema and the definitions its `$ref`s point into; `custom` selects CRD (structural) rules."""

    root: Schema
    definitions: Mapping[str, Schema]
    custom: bool

    @classmethod
    def custom_resource(cls, schema: Schema, definitions: Mapping[str, Schema]) -> SchemaView:
        properties = dict(schema.get("properties") or {})
        properties["apiVersion"] = {"type": "string"}
        properties["kind"] = {"type": "string"}
        properties["metadata"] = {"$ref": f"#/$defs/{OBJECT_META}"}
        return cls({**schema, "type": "object", "properties": properties}, definitions, True)

    def resolve(self, node: Schema) -> Schema:
        ref = node.get("$ref")
        if isinstance(ref, str):
            return self.definitions.get(ref.rsplit("/", 1)[-1], {})
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping) and "$ref" in all_of[0]:
            return self.resolve(all_of[0])
        return node

    def is_builtin_ref(self, node: Schema) -> bool:
        return "$ref" in node


class NodeMemo(Generic[T]):
    """A value computed once per schema node: nodes never change, so they are known by identity (and kept)."""

    def __init__(self, compute: Callable[[Schema], T]) -> None:
        self._compute = compute
        self._found: dict[int, tuple[Schema, T]] = {}

    def __call__(self, node: Schema) -> T:
        known = self._found.get(id(node))
        if known is not None and known[0] is node:
            return known[1]
        found = self._compute(node)
        self._found[id(node)] = (node, found)
        return found


def json_type(node: Schema) -> str | None:
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind is None and ("properties" in node or "additionalProperties" in node):
        return "object"
    return kind if isinstance(kind, str) else None


def join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def type_matches(expected: str, value: Any) -> bool:
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if expected == "string":
        return isinstance(value, str)
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "object":
        return isinstance(value, dict)
    if expected == "array":
        return isinstance(value, list)
    return True


def is_int_or_string(node: Schema) -> bool:
    if node.get("x-kubernetes-int-or-string"):
        return True
    options = node.get("oneOf") or node.get("anyOf") or []
    return bool(options) and all(isinstance(o, Mapping) and json_type(o) in ("string", "integer", "number")
                                 for o in options)


# unknown fields (pruning) --------------------------------------------------------------------------------------


def prune(view: SchemaView, obj: Any, unchanged: Unchanged = NOTHING) -> list[str]:
    """Drop fields the schema does not declare (and nulls of non-nullable CR fields); return their paths.
    Parts `unchanged` from a stored object (pruned by the same schema) are not walked."""
    found: list[str] = []
    _prune(view, view.root, obj, "", found, embedded=False, structural=view.custom, unchanged=unchanged)
    return found


def _prune(view: SchemaView, node: Schema, value: Any, path: str, found: list[str], embedded: bool,
           structural: bool, unchanged: Unchanged) -> None:
    """`structural`: CRD rules (objects without properties hold nothing); off inside built-in definitions."""
    if value in unchanged:
        return
    if "$ref" in node:
        structural = False
    node = view.resolve(node)
    if isinstance(value, list):
        items = node.get("items")
        if isinstance(items, Mapping):
            for i, item in enumerate(value):
                if isinstance(item, dict | list) and item not in unchanged:  # nothing to prune in the rest
                    _prune(view, items, item, f"{path}[{i}]", found,
                           bool(items.get("x-kubernetes-embedded-resource")), structural, unchanged)
        return
    if not isinstance(value, dict):
        return
    properties = node.get("properties") or {}
    extra = node.get("additionalProperties")
    preserve = bool(node.get("x-kubernetes-preserve-unknown-fields"))
    open_object = not properties and extra is None and not structural and json_type(node) in ("object", None)
    for key in list(value):
        child = properties.get(key)
        if embedded and key in _EMBEDDED_KEYS and child is None:
            child = {"$ref": f"#/$defs/{OBJECT_META}"} if key == "metadata" else {"type": "string"}
        if child is None and isinstance(extra, Mapping):
            child = extra
        if child is not None:
            if value[key] is None and structural and "$ref" not in child and not child.get("nullable"):
                del value[key]
                continue
            if isinstance(value[key], dict | list) and value[key] not in unchanged:
                _prune(view, child, value[key], join(path, key), found,
                       bool(view.resolve(child).get("x-kubernetes-embedded-resource")), structural, unchanged)
        elif not (preserve or extra is True or open_object):
            found.append(join(path, key))
            del value[key]


# type errors of built-in kinds (a decode error there: 400) --------------------------------------------------------


@dataclass(frozen=True)
class TypeMismatch:
    path: str
    struct: str
    expected: str
    got: str


_GO_TYPES = {"integer": "int64", "number": "float64", "string": "string", "boolean": "bool",
             "object": "map[string]interface {}", "array": "[]interface {}"}


def go_type(node: Schema) -> str:
    kind = json_type(node) or "object"
    if kind == "integer" and node.get("format") == "int32":
        return "int32"
    return _GO_TYPES.get(kind, kind)


def type_mismatches(view: SchemaView, obj: Any, unchanged: Unchanged = NOTHING) -> list[TypeMismatch]:
    """Values of the wrong JSON type, outside the parts `unchanged` from a stored object."""
    return list(_mismatches(view, view.root, obj, "", "", "Object", unchanged))


def _mismatches(view: SchemaView, node: Schema, value: Any, path: str, json_path: str,
                struct: str, unchanged: Unchanged) -> Iterator[TypeMismatch]:
    if value in unchanged:
        return
    ref = node.get("$ref")
    if isinstance(ref, str):
        struct = ref.rsplit(".", 1)[-1]
    node = view.resolve(node)
    if value is None or is_int_or_string(node):
        return
    expected = json_type(node)
    if expected and not type_matches(expected, value):
        yield TypeMismatch(path, f"{struct}.{json_path}" if json_path else struct, go_type(node),
                           type_name(value).replace("integer", "number").replace("boolean", "bool"))
        return
    if isinstance(value, dict):
        properties = node.get("properties") or {}
        extra = node.get("additionalProperties")
        for key, child_value in value.items():
            child = properties.get(key) or (extra if isinstance(extra, Mapping) else None)
            if child is not None:
                yield from _mismatches(view, child, child_value, join(path, key), join(json_path, key), struct,
                                       unchanged)
    elif isinstance(value, list) and isinstance(node.get("items"), Mapping):
        for i, item in enumerate(value):
            yield from _mismatches(view, node["items"], item, f"{path}[{i}]", json_path, struct, unchanged)


# validation of custom resources (422 causes) ----------------------------------------------------------------------


def validate(view: SchemaView, obj: Any, unchanged: Unchanged = NOTHING) -> list[FieldError]:
    """Every schema violation of a custom resource, in document order (metadata is checked elsewhere). Parts
    `unchanged` from a stored object that passed the same schema hold none."""
    errors: list[FieldError] = []
    root = view.root
    properties = root.get("properties") or {}
    for key in root.get("required") or ():
        if key not in obj:
            errors.append(FieldError(ErrorType.REQUIRED, key))
    for key, value in obj.items():
        if key in ("metadata", "apiVersion", "kind"):
            continue
        child = properties.get(key)
        if child is not None:
            _validate(view, child, value, key, errors, unchanged)
    return errors


def _validate(view: SchemaView, node: Schema, value: Any, path: str, errors: list[FieldError],
              unchanged: Unchanged = NOTHING) -> None:
    if value in unchanged:
        return
    node = view.resolve(node)
    if value is None:
        if not node.get("nullable") and json_type(node):
            errors.append(_type_error(path, json_type(node) or "", value))
        return
    if node.get("x-kubernetes-int-or-string"):
        if not (isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))):
            errors.append(_type_error(path, "integer,string", value))
            return
    else:
        expected = json_type(node)
        if expected and not type_matches(expected, value):
            errors.append(_type_error(path, expected, value))
            return
    _check_value(node, value, path, errors)
    _check_combinators(view, node, value, path, errors, unchanged)
    if isinstance(value, dict):
        _validate_object(view, node, value, path, errors, unchanged)
    elif isinstance(value, list):
        _validate_list(view, node, value, path, errors, unchanged)


def _type_error(path: str, expected: str, value: Any) -> FieldError:
    got = type_name(value)
    return FieldError(ErrorType.TYPE_INVALID, path, got, f'{path} in body must be of type {expected}: "{got}"')


def _check_value(node: Schema, value: Any, path: str, errors: list[FieldError]) -> None:
    enum = node.get("enum")
    if isinstance(enum, list) and value not in enum:
        supported = ", ".join(_quote(v) for v in enum)
        errors.append(FieldError(ErrorType.NOT_SUPPORTED, path, value, f"supported values: {supported}"))
    if isinstance(value, int | float) and not isinstance(value, bool):
        _check_number(node, value, path, errors)
    if isinstance(value, str):
        _check_string(node, value, path, errors)


def _quote(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def _check_number(node: Schema, value: float, path: str, errors: list[FieldError]) -> None:
    maximum, minimum = node.get("maximum"), node.get("minimum")
    if maximum is not None:
        if node.get("exclusiveMaximum") and value >= maximum:
            errors.append(FieldError(ErrorType.INVALID, path, value, f"{path} in body should be less than {maximum}"))
        elif value > maximum:
            errors.append(FieldError(ErrorType.INVALID, path, value,
                                     f"{path} in body should be less than or equal to {maximum}"))
    if minimum is not None:
        if node.get("exclusiveMinimum") and value <= minimum:
            errors.append(FieldError(ErrorType.INVALID, path, value,
                                     f"{path} in body should be greater than {minimum}"))
        elif value < minimum:
            errors.append(FieldError(ErrorType.INVALID, path, value,
                                     f"{path} in body should be greater than or equal to {minimum}"))
    multiple = node.get("multipleOf")
    if multiple and value % multiple:
        errors.append(FieldError(ErrorType.INVALID, path, value, f"{path} in body should be a multiple of {multiple}"))


def _check_string(node: Schema, value: str, path: str, errors: list[FieldError]) -> None:
    max_length, min_length = node.get("maxLength"), node.get("minLength")
    if max_length is not None and len(value) > max_length:
        errors.append(FieldError(ErrorType.TOO_LONG, path, value, f"may not be more than {max_length} bytes"))
    if min_length is not None and len(value) < min_length:
        errors.append(FieldError(ErrorType.INVALID, path, value,
                                 f"{path} in body should be at least {min_length} chars long"))
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        try:
            matched = re.search(pattern, value) is not None
        except re.error:
            matched = True
        if not matched:
            errors.append(FieldError(ErrorType.INVALID, path, value, f"{path} in body should match '{pattern}'"))
    fmt = node.get("format")
    if isinstance(fmt, str) and not format_ok(fmt, value):
        detail = f"{path} in body must be of type {fmt}: {_quote(value)}"
        errors.append(FieldError(ErrorType.INVALID, path, value, detail))


def format_ok(fmt: str, value: str) -> bool:
    """The string formats this server checks; unknown formats pass."""
    try:
        if fmt == "date-time":
            datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        elif fmt == "date":
            datetime.date.fromisoformat(value)
        elif fmt == "uuid":
            uuid.UUID(value)
        elif fmt == "ipv4":
            return re.fullmatch(r"(\d{1,3}\.){3}\d{1,3}", value) is not None
    except ValueError:
        return False
    return True


def _check_combinators(view: SchemaView, node: Schema, value: Any, path: str, errors: list[FieldError],
                       unchanged: Unchanged) -> None:
    """allOf's errors are the value's own (none in its `unchanged` parts); the alternatives of anyOf, oneOf and
    not are tried on the whole value: a part that passed the schema may fail an alternative that did not hold."""
    for sub in node.get("allOf") or ():
        _validate(view, sub, value, path, errors, unchanged)
    any_of = node.get("anyOf")
    if isinstance(any_of, list) and any_of and not any(_valid(view, s, value, path) for s in any_of):
        errors.append(FieldError(ErrorType.INVALID, path, value, f'"{path}" must validate at least one schema (anyOf)'))
    one_of = node.get("oneOf")
    if isinstance(one_of, list) and one_of and sum(_valid(view, s, value, path) for s in one_of) != 1:
        errors.append(FieldError(ErrorType.INVALID, path, value, f'"{path}" must validate one and only one schema '
                                                                 "(oneOf)"))
    negated = node.get("not")
    if isinstance(negated, Mapping) and _valid(view, negated, value, path):
        errors.append(FieldError(ErrorType.INVALID, path, value, f'"{path}" must not validate the schema (not)'))


def _valid(view: SchemaView, node: Schema, value: Any, path: str) -> bool:
    found: list[FieldError] = []
    _validate(view, node, value, path, found)
    return not found


def _validate_object(view: SchemaView, node: Schema, value: dict[str, Any], path: str,
                     errors: list[FieldError], unchanged: Unchanged) -> None:
    for key in node.get("required") or ():
        if key not in value:
            errors.append(FieldError(ErrorType.REQUIRED, join(path, key)))
    max_props, min_props = node.get("maxProperties"), node.get("minProperties")
    if max_props is not None and len(value) > max_props:
        errors.append(FieldError(ErrorType.TOO_MANY, path, len(value), f"must have at most {max_props} items"))
    if min_props is not None and len(value) < min_props:
        errors.append(FieldError(ErrorType.INVALID, path, len(value),
                                 f"{path} in body should have at least {min_props} properties"))
    properties = node.get("properties") or {}
    extra = node.get("additionalProperties")
    embedded = bool(node.get("x-kubernetes-embedded-resource"))
    for key, child_value in value.items():
        if embedded and key in _EMBEDDED_KEYS:
            continue
        child = properties.get(key) or (extra if isinstance(extra, Mapping) else None)
        if child is not None and child_value not in unchanged:
            _validate(view, child, child_value, join(path, key), errors, unchanged)


def _validate_list(view: SchemaView, node: Schema, value: list[Any], path: str, errors: list[FieldError],
                   unchanged: Unchanged) -> None:
    max_items, min_items = node.get("maxItems"), node.get("minItems")
    if max_items is not None and len(value) > max_items:
        errors.append(FieldError(ErrorType.TOO_MANY, path, len(value), f"must have at most {max_items} items"))
    if min_items is not None and len(value) < min_items:
        errors.append(FieldError(ErrorType.INVALID, path, len(value),
                                 f"{path} in body should have at least {min_items} items"))
    _check_unique(node, value, path, errors)
    items = node.get("items")
    if isinstance(items, Mapping):
        for i, item in enumerate(value):
            if item not in unchanged:
                _validate(view, items, item, f"{path}[{i}]", errors, unchanged)


def _check_unique(node: Schema, value: list[Any], path: str, errors: list[FieldError]) -> None:
    list_type = node.get("x-kubernetes-list-type")
    keys = node.get("x-kubernetes-list-map-keys") or []
    seen: list[Any] = []
    for i, item in enumerate(value):
        if list_type == "map" and isinstance(item, dict):
            ident: Any = {k: item.get(k) for k in keys}
        elif list_type == "set" or node.get("uniqueItems"):
            ident = item
        else:
            return
        if ident in seen:
            errors.append(FieldError(ErrorType.DUPLICATE, f"{path}[{i}]", ident))
        seen.append(ident)


# defaults ------------------------------------------------------------------------------------------------------


def apply_defaults(view: SchemaView, obj: dict[str, Any], unchanged: Unchanged = NOTHING) -> None:
    """Fill absent fields that declare a `default`, wherever their parent exists (CRD defaulting); not in the
    parts `unchanged` from a stored object defaulted by the same schema."""
    _default(view, view.root, obj, unchanged)


def _default(view: SchemaView, node: Schema, value: Any, unchanged: Unchanged) -> None:
    if value in unchanged:
        return
    node = view.resolve(node)
    if isinstance(value, dict):
        properties = node.get("properties") or {}
        for key, child in properties.items():
            child = view.resolve(child)
            if key not in value and "default" in child:
                value[key] = copy_json(child["default"])
            if key in value:
                _default(view, child, value[key], unchanged)
        extra = node.get("additionalProperties")
        if isinstance(extra, Mapping):
            for key in value:
                if key not in properties:
                    _default(view, extra, value[key], unchanged)
    elif isinstance(value, list) and isinstance(node.get("items"), Mapping):
        for item in value:
            _default(view, node["items"], item, unchanged)
