"""CRD validation rules (`x-kubernetes-validations`): compiled once per CRD version, checked on every write.

Follows k8s.io/apiextensions-apiserver pkg/apiserver/schema/cel/validation.go: `self` is the value at the
rule's schema node, `oldSelf` its correlated old value (transition rules run only on updates where that value
exists), errors at the node's path (or the rule's fieldPath) worded as the real server words them, and
ratcheting: on update, a failing rule that does not use oldSelf on an unchanged value is no error.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from engine import cel
from engine.apiserver import celcosts as costs
from engine.apiserver.status import OMIT, ErrorType, FieldError, GoJson, go_json

__all__ = ["Validator", "errors_of", "schema_errors"]

Schema = Mapping[str, Any]
REASONS = ("FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired")
BLOCKING = (ErrorType.NOT_SUPPORTED, ErrorType.REQUIRED, ErrorType.TOO_LONG, ErrorType.TOO_MANY,
            ErrorType.TYPE_INVALID)
NOT_CHECKED = ("some validation rules were not checked because the object was invalid; correct the existing "
               "errors to complete validation")
MAX_MESSAGE = 5 * 1024
VARIABLES = ("oldSelf", "self")
OLD_VALUE, HAS_OLD = "__oldSelfValue", "__hasOldSelf"


@dataclass(frozen=True)
class Rule:
    """One compiled rule of a schema node."""

    spec: Mapping[str, Any]
    program: cel.Program
    message: cel.Program | None
    field_path: str
    uses_old_self: bool

    @property
    def optional_old_self(self) -> bool:
        """optionalOldSelf: also evaluated without an old value, oldSelf then being optional.none()."""
        return self.spec.get("optionalOldSelf") is True

    def activation(self, value: Any, old: Any) -> dict[str, Any]:
        if self.optional_old_self:
            return {"self": value, OLD_VALUE: old, HAS_OLD: old is not None}
        return {"self": value, "oldSelf": old}

    @property
    def words(self) -> str:
        """ruleErrorString: the message when there is one, else the rule."""
        return str(self.spec.get("message") or "").strip() or str(self.spec.get("rule", "")).strip()


@dataclass(frozen=True)
class Validator:
    """The rules of one schema node and the validators of its children (only where rules are below)."""

    type: str
    schema: Schema
    rules: tuple[Rule, ...] = ()
    properties: Mapping[str, Validator] = field(default_factory=dict)
    additional: Validator | None = None
    items: Validator | None = None
    map_keys: tuple[str, ...] = ()


# compiling (at CRD create/update, and once per schema for writes) ------------------------------------------------


def _variables(node: Schema, root: bool, optional_old: bool) -> dict[str, Schema | None]:
    typed = cel.resource_root(node) if root else node
    return {"self": typed, "oldSelf": None if optional_old else typed}


@dataclass
class _Problems:
    """What compiling a schema's rules found: schema errors (all of them come first), CEL errors, and costs."""

    schema: list[FieldError] = field(default_factory=list)
    cel: list[FieldError] = field(default_factory=list)
    budget: costs.Budget = field(default_factory=costs.Budget)


def _specs(node: Schema, where: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for i, spec in enumerate(node.get("x-kubernetes-validations") or ()):
        if isinstance(spec, Mapping):
            yield f"{where}.x-kubernetes-validations[{i}]", spec


def _compile(node: Schema, root: bool, where: str, found: _Problems, uncorrelatable: str | None,
             cardinality: int | None) -> tuple[Rule, ...]:
    """The node's rules, compiled as the real server compiles them once no schema error is at or below it."""
    rules = []
    for at, spec in _specs(node, where):
        start = len(found.cel)
        rule = _compile_rule(node, root, spec, at, found.cel)
        new = [e.field for e in found.cel[start:]]
        if f"{at}.rule" not in new:  # the rule compiled: its cost is known whatever else is wrong, and comes first
            found.cel[start:start] = found.budget.observe(node, root, spec, at, cardinality,
                                                          message=f"{at}.messageExpression" not in new)
        if rule is not None and rule.uses_old_self and uncorrelatable is not None:
            found.cel.append(FieldError(ErrorType.INVALID, f"{at}.rule", str(spec["rule"]), "oldSelf cannot be used "
                                        f"on the uncorrelatable portion of the schema within {uncorrelatable}"))
        elif rule is not None:
            rules.append(rule)
    return tuple(rules)


def _compile_rule(node: Schema, root: bool, spec: Mapping[str, Any], at: str,
                  problems: list[FieldError]) -> Rule | None:
    variables = _variables(node, root, spec.get("optionalOldSelf") is True)
    try:
        program = cel.compile_checked(str(spec["rule"]), variables, bindings=False)
    except cel.CompileError as e:
        problems.append(FieldError(ErrorType.INVALID, f"{at}.rule", _go_rule(spec), f"compilation failed: {e}"))
        return None
    if cel.result_type(program, variables) not in ("bool", "dyn"):
        problems.append(FieldError(ErrorType.INVALID, f"{at}.rule", _go_rule(spec),
                                   "cel expression must evaluate to a bool"))
        return None
    message = None
    if str(spec.get("messageExpression") or "").strip():
        try:
            message = cel.compile_checked(str(spec["messageExpression"]), variables, bindings=False)
        except cel.CompileError as e:
            problems.append(FieldError(ErrorType.INVALID, f"{at}.messageExpression", _go_rule(spec),
                                       f"messageExpression compilation failed: {e}"))
            return None
        if cel.result_type(message, variables) not in ("string", "dyn"):
            problems.append(FieldError(ErrorType.INVALID, f"{at}.messageExpression", _go_rule(spec),
                                       "messageExpression must evaluate to a string"))
            return None
    uses_old_self = "oldSelf" in program.variables
    if not uses_old_self and spec.get("optionalOldSelf") is not None:
        problems.append(FieldError(ErrorType.INVALID, f"{at}.optionalOldSelf", spec["optionalOldSelf"],
                                   "may not be set if oldSelf is not used in rule"))
        return None
    if spec.get("optionalOldSelf") is True:
        program = cel.compile_checked(f"cel.bind(oldSelf, {HAS_OLD} ? optional.of({OLD_VALUE}) : optional.none(), "
                                      f"({spec['rule']}))", {"self": variables["self"], OLD_VALUE: None,
                                                              HAS_OLD: None})
    return Rule(spec, program, message, normalized_path(node, str(spec.get("fieldPath") or "")) or "",
                uses_old_self)


def _rule_problems(node: Schema, spec: Mapping[str, Any], at: str) -> list[FieldError]:
    """The checks of a rule's other fields (apiextensions validation.go)."""
    rule, message = str(spec.get("rule") or ""), str(spec.get("message") or "")
    found = []
    if not rule.strip():
        found.append(FieldError(ErrorType.REQUIRED, f"{at}.rule", detail="rule is not specified"))
    elif message and not message.strip():
        found.append(FieldError(ErrorType.INVALID, f"{at}.message", message, "must be non-empty if specified"))
    elif "\n" in message.strip():
        found.append(FieldError(ErrorType.INVALID, f"{at}.message", message, "must not contain line breaks"))
    elif "\n" in rule.strip() and not message.strip():
        found.append(FieldError(ErrorType.REQUIRED, f"{at}.message",
                                detail="message must be specified if rule contains line breaks"))
    expression = str(spec.get("messageExpression") or "")
    if expression and not expression.strip():
        found.append(FieldError(ErrorType.REQUIRED, f"{at}.messageExpression",
                                detail="messageExpression must be non-empty if specified"))
    reason = spec.get("reason")
    if reason is not None and reason not in REASONS:
        supported = ", ".join(f'"{r}"' for r in REASONS)
        found.append(FieldError(ErrorType.NOT_SUPPORTED, f"{at}.reason", reason, f"supported values: {supported}"))
    path = str(spec.get("fieldPath") or "")
    if path and normalized_path(node, path) is None:
        found.append(FieldError(ErrorType.INVALID, f"{at}.fieldPath", path, "must be a valid path"))
    return found


def _go_rule(spec: Mapping[str, Any]) -> GoJson:
    """The internal ValidationRule as Go's json.Marshal prints it (no json tags: Go field names, in order)."""
    fields = {"Rule": str(spec.get("rule") or ""), "Message": str(spec.get("message") or ""),
              "MessageExpression": str(spec.get("messageExpression") or ""), "Reason": spec.get("reason"),
              "FieldPath": str(spec.get("fieldPath") or ""), "OptionalOldSelf": spec.get("optionalOldSelf")}
    return go_json(fields)


def normalized_path(node: Schema, path: str) -> str | None:
    """ValidFieldPath: `.a['b.c']` checked against the schema and written as field.Path prints it; None if
    invalid."""
    out, i = "", 0
    while i < len(path):
        if path[i] == ".":
            end = next((j for j in range(i + 1, len(path)) if path[j] in ".["), len(path))
            name, i = path[i + 1:end], end
        elif path.startswith("['", i) and "']" in path[i:]:
            end = path.index("']", i)
            name, i = path[i + 2:end].replace("\\'", "'"), end + 2
        else:
            return None
        properties, extra = node.get("properties"), node.get("additionalProperties")
        if isinstance(properties, Mapping) and properties:
            if name not in properties:
                return None
            node, out = properties[name], f"{out}.{name}" if out else name
        elif isinstance(extra, Mapping):
            node, out = extra, f"{out}[{name}]"
        else:
            return None
    return out


def build(schema: Schema, where: str, root: bool = True) -> tuple[Validator | None, list[FieldError]]:
    """The validator of a schema (None when it has no rules) and the problems of its rules, in the real server's
    order: schema errors, then the rules' errors from the deepest nodes up, then the schema's cost total."""
    found = _Problems()
    validator = _build(schema, where, root, found, None, 1)
    return validator, found.schema + found.cel + found.budget.total_errors(where)


def _embedded(node: Any) -> bool:
    """An embedded resource is typed like the root: apiVersion, kind and metadata.name/generateName."""
    return isinstance(node, Mapping) and bool(node.get("x-kubernetes-embedded-resource"))


def _build(node: Schema, where: str, root: bool, found: _Problems, uncorrelatable: str | None,
           cardinality: int | None) -> Validator | None:
    """`uncorrelatable`: the path of the first list above whose items cannot be matched with their old values;
    `cardinality`: how many times the node can occur in an object (None: unbounded). Children come first, as in
    ValidateCustomResourceDefinitionOpenAPISchema."""
    start = len(found.schema)
    below = costs.child_cardinality(node, cardinality)
    extra = node.get("additionalProperties")
    additional = _build(extra, f"{where}.additionalProperties", _embedded(extra), found, uncorrelatable, below) \
        if isinstance(extra, Mapping) else None
    properties = {}
    for name, child in sorted((node.get("properties") or {}).items()):
        if isinstance(child, Mapping):
            built = _build(child, f"{where}.properties[{name}]", _embedded(child), found, uncorrelatable, below)
            if built is not None:
                properties[name] = built
    items_schema = node.get("items")
    correlation = uncorrelatable or (where if node.get("x-kubernetes-list-type") != "map" else None)
    items = _build(items_schema, f"{where}.items", _embedded(items_schema), found, correlation, below) \
        if isinstance(items_schema, Mapping) else None
    for at, spec in _specs(node, where):
        found.schema += _rule_problems(node, spec, at)
    rules = _compile(node, root, where, found, uncorrelatable, cardinality) if len(found.schema) == start else ()
    if not (rules or properties or additional or items):
        return None
    keys = tuple(node.get("x-kubernetes-list-map-keys") or ()) if node.get("x-kubernetes-list-type") == "map" else ()
    return Validator(str(node.get("type") or ""), node, rules, properties, additional, items, keys)


def schema_errors(schema: Schema, where: str) -> list[FieldError]:
    """The CRD create/update errors of a version's rules (`where`: the path of its openAPIV3Schema)."""
    return build(schema, where)[1]


_validators: dict[int, tuple[Schema, Validator | None]] = {}
MAX_VALIDATORS = 512  # served schemas remembered (a CRD update serves new schema objects)


def validator_for(schema: Schema) -> Validator | None:
    """The validator of a served schema, compiled on first use and kept with the schema object."""
    cached = _validators.get(id(schema))
    if cached is None or cached[0] is not schema:
        if len(_validators) >= MAX_VALIDATORS:
            _validators.clear()
        cached = (schema, build(schema, "")[0])
        _validators[id(schema)] = cached
    return cached[1]


# checking writes -----------------------------------------------------------------------------------------------


def errors_of(schema: Schema, new: Any, old: Any, found: list[FieldError],
              warnings: list[str] | None = None) -> list[FieldError]:
    """The rule errors of a write, after the schema errors `found` (blocking ones stop the rules); errors on
    unchanged values of an update are ratcheted into `warnings`."""
    validator = validator_for(schema)
    if validator is None:
        return []
    if any(e.type in BLOCKING for e in found):
        return [FieldError(ErrorType.INVALID, "<nil>", None, NOT_CHECKED)]
    errors = []
    for error, ratcheted in _check(validator, None, new, old, old is not None and new == old):
        if not ratcheted:
            errors.append(error)
        elif warnings is not None:
            warnings.append(str(error))
    return errors


def _child(path: str | None, name: str) -> str:
    return name if path is None else f"{path}.{name}"


def _check(v: Validator, path: str | None, value: Any, old: Any,
           unchanged: bool) -> Iterator[tuple[FieldError, bool]]:
    """Each rule error below this node, and whether ratcheting turns it into a warning."""
    if value is None:
        return
    for rule in v.rules:
        yield from _check_rule(v, rule, path, value, old, unchanged)
    if isinstance(value, dict):
        old_map = old if isinstance(old, dict) else {}
        for key, child in sorted(value.items()):
            sub = v.properties.get(key) or (v.additional if key not in v.properties else None)
            if sub is None:
                continue
            where = _child(path, key) if key in v.properties else f"{path or ''}[{key}]"
            yield from _check(sub, where, child, old_map.get(key), _same(key in old_map, old_map.get(key), child,
                                                                          unchanged))
    elif isinstance(value, list) and v.items is not None:
        old_items = _by_keys(v.map_keys, old) if v.map_keys else {}
        for i, item in enumerate(value):
            before = old_items.get(_key_of(v.map_keys, item)) if v.map_keys else None
            correlated = bool(v.map_keys) and before is not None
            yield from _check(v.items, f"{path}[{i}]", item, before, _same(correlated, before, item, unchanged))


def _same(correlated: bool, before: Any, now: Any, parent_unchanged: bool) -> bool:
    return before == now if correlated else parent_unchanged


def _key_of(keys: tuple[str, ...], item: Any) -> str:
    return json.dumps([item.get(k) for k in keys] if isinstance(item, dict) else None)


def _by_keys(keys: tuple[str, ...], old: Any) -> dict[str, Any]:
    return {_key_of(keys, item): item for item in old} if isinstance(old, list) else {}


def _check_rule(v: Validator, rule: Rule, path: str | None, value: Any, old: Any,
                unchanged: bool) -> Iterator[tuple[FieldError, bool]]:
    if rule.uses_old_self and old is None and not rule.optional_old_self:
        return
    value, old = cel.to_cel(v.schema, value), cel.to_cel(v.schema, old)
    try:
        passed = rule.program.evaluate(rule.activation(value, old))
    except cel.EvalError as e:
        yield FieldError(ErrorType.INVALID, path or "<nil>", v.type, _runtime_detail(str(e), rule)), False
        return
    if passed is True:
        return
    where = _child(path, rule.field_path) if rule.field_path else path or "<nil>"
    shown = OMIT if v.type in ("object", "array") else value
    error = _error_for(rule.spec.get("reason"), where, shown, _message(rule, {"self": value, "oldSelf": old}))
    yield error, unchanged and not rule.uses_old_self


def _runtime_detail(error: str, rule: Rule) -> str:
    if error.startswith("no such overload"):
        return (f"'{error}': call arguments did not match a supported operator, function or macro signature for "
                f"rule: {rule.words}")
    return f"{error} evaluating rule: {rule.words}"


def _message(rule: Rule, activation: Mapping[str, Any]) -> str:
    if rule.message is not None:
        try:
            text = rule.message.evaluate(activation)
        except cel.EvalError:
            text = None
        if isinstance(text, str) and text.strip() and "\n" not in text.strip() and len(text.strip()) <= MAX_MESSAGE:
            return text.strip()
    message = str(rule.spec.get("message") or "").strip()
    return message or f"failed rule: {rule.words}"


def _error_for(reason: Any, where: str, value: Any, detail: str) -> FieldError:
    if reason == "FieldValueForbidden":
        return FieldError(ErrorType.FORBIDDEN, where, detail=detail)
    if reason == "FieldValueRequired":
        return FieldError(ErrorType.REQUIRED, where, detail=detail)
    if reason == "FieldValueDuplicate":
        return FieldError(ErrorType.DUPLICATE, where, value)
    return FieldError(ErrorType.INVALID, where, value, detail)
