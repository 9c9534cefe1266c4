"""Parameter values: typing command-line text, validating against declarations, triggers, redaction."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from engine import yamlbounds
from engine.errors import ImmutableParameterChanged, ParameterInvalid, PermanentError, RequiredParametersMissing
from engine.model import Package, Parameter, ParamType

__all__ = [
    "REDACTED",
    "coerce",
    "load_file",
    "parse_assignments",
    "redact",
    "resolve",
    "trigger_for_change",
    "validate",
    "value_text",
    "violation",
]

REDACTED = "*****"

_TRUE = frozenset({"true", "yes", "on"})
_FALSE = frozenset({"false", "no", "off"})
_ARTICLE = {ParamType.INTEGER: "an integer", ParamType.ARRAY: "an array", ParamType.MAP: "a map"}


def _type_phrase(t: ParamType) -> str:
    return _ARTICLE.get(t, f"a {t.value}")


def coerce(param: Parameter, raw: str) -> Any:
    """Type the text of `-p name=raw` by the parameter's declared type."""
    text = raw.strip()
    try:
        match param.type:
            case ParamType.STRING:
                return raw
            case ParamType.INTEGER:
                return int(text, 10)
            case ParamType.NUMBER:
                return _number(text)
            case ParamType.BOOLEAN:
                return _boolean(text)
            case ParamType.ARRAY | ParamType.MAP:
                return _structured(param, text)
    except ValueError:
        pass
    raise ParameterInvalid(param.name, f"must be {_type_phrase(param.type)}{_got(param, raw)}")


def _number(text: str) -> int | float:
    try:
        return int(text, 10)
    except ValueError:
        value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _boolean(text: str) -> bool:
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    raise ValueError(text)


def _structured(param: Parameter, text: str) -> Any:
    try:
        value = yamlbounds.load(text)
    except (yaml.YAMLError, ValueError, RecursionError) as e:
        raise ValueError(text) from e
    if _type_violation(param, value):
        raise ValueError(text)
    return value


def parse_assignments(pkg: Package, pairs: Sequence[str]) -> dict[str, Any]:
    """Turn `["a=1", "b=x"]` into typed values; the last assignment of a name wins."""
    values: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep:
            raise ParameterInvalid(pair, "must be given as NAME=VALUE")
        values[name] = coerce(_declared(pkg, name), raw)
    return values


def load_file(pkg: Package, path: str) -> dict[str, Any]:
    """Read a `-P params.yaml` file: a mapping of parameter names to values, typed and validated."""
    try:
        data = yamlbounds.load(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise PermanentError(f"cannot read parameter file {path}: {e.strerror or e}") from None
    except yamlbounds.OutOfBounds as e:
        raise PermanentError(f"parameter file {path} {e.problem}") from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        raise PermanentError(f"parameter file {where} is not valid YAML: {e.problem or e.context}") from None
    except (yaml.YAMLError, UnicodeDecodeError, ValueError, RecursionError) as e:
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise PermanentError(f"parameter file {path} is not valid YAML: {reason}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise PermanentError(f"parameter file {path} must hold a mapping of parameter names to values")
    values: dict[str, Any] = {}
    for name, value in data.items():
        param = _declared(pkg, str(name))
        typed = coerce(param, value) if isinstance(value, str) else value
        validate(param, typed)
        values[param.name] = typed
    return values


def resolve(pkg: Package, given: Mapping[str, Any]) -> dict[str, Any]:
    """Every declared parameter's value: given, else its default, else None; all validated.

    A value of None counts as not given. Raises ParameterInvalid naming the first bad value, else
    RequiredParametersMissing naming every required parameter without a value.
    """
    for name in sorted(given):
        _declared(pkg, name)
    values: dict[str, Any] = {}
    missing: list[str] = []
    for param in sorted(pkg.parameters, key=lambda p: p.name):
        value = given.get(param.name)
        if value is None and param.has_default:
            value = param.default
        if value is None:
            missing += [param.name] if param.required else []
        else:
            validate(param, value)
        values[param.name] = value
    if missing:
        raise RequiredParametersMissing(missing)
    return values


def validate(param: Parameter, value: Any) -> None:
    """Raise ParameterInvalid when `value` breaks the parameter's type or constraints."""
    reason = violation(param, value)
    if reason:
        raise ParameterInvalid(param.name, reason)


def violation(param: Parameter, value: Any) -> str | None:
    """Why `value` does not fit the parameter (type, enum, bounds, pattern, length), or None.

    The reason quotes the value, except a secret parameter's: no refusal may print a secret.
    """
    return (
        _type_violation(param, value)
        or _enum_violation(param, value)
        or _bounds_violation(param, value)
        or _pattern_violation(param, value)
        or _length_violation(param, value)
    )


def _type_violation(param: Parameter, value: Any) -> str | None:
    t = param.type
    fits = {
        ParamType.STRING: isinstance(value, str),
        ParamType.INTEGER: isinstance(value, int) and not isinstance(value, bool),
        ParamType.NUMBER: isinstance(value, int | float) and not isinstance(value, bool),
        ParamType.BOOLEAN: isinstance(value, bool),
        ParamType.ARRAY: isinstance(value, list),
        ParamType.MAP: isinstance(value, dict),
    }[t]
    return None if fits else f"must be {_type_phrase(t)}{_got(param, value)}"


def _enum_violation(param: Parameter, value: Any) -> str | None:
    if param.enum is None or any(_same(value, e) for e in param.enum):
        return None
    return f"must be one of {', '.join(_show(e) for e in param.enum)}{_got(param, value)}"


def _same(a: Any, b: Any) -> bool:
    """Equality that keeps booleans apart from the numbers 0 and 1."""
    return isinstance(a, bool) == isinstance(b, bool) and bool(a == b)


def _bounds_violation(param: Parameter, value: Any) -> str | None:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    if param.minimum is not None and value < param.minimum:
        return f"must be at least {_show(param.minimum)}{_got(param, value)}"
    if param.maximum is not None and value > param.maximum:
        return f"must be at most {_show(param.maximum)}{_got(param, value)}"
    return None


def _pattern_violation(param: Parameter, value: Any) -> str | None:
    """Patterns match anywhere in the string, as in JSON Schema; anchor them to match it all."""
    if param.pattern is None or not isinstance(value, str):
        return None
    try:
        matched = re.search(param.pattern, value) is not None
    except re.error:
        return f"has a pattern that is not a valid regular expression: {param.pattern!r}"
    return None if matched else f"must match the pattern {param.pattern!r}{_got(param, value)}"


def _length_violation(param: Parameter, value: Any) -> str | None:
    if not isinstance(value, str | list | dict):
        return None
    unit = "character" if isinstance(value, str) else "item"
    got = "" if param.secret else f", got {len(value)}"  # not even a secret's length
    if param.min_length is not None and len(value) < param.min_length:
        return f"must have at least {_count(param.min_length, unit)}{got}"
    if param.max_length is not None and len(value) > param.max_length:
        return f"must have at most {_count(param.max_length, unit)}{got}"
    return None


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def _got(param: Parameter, value: Any) -> str:
    """`, got VALUE` for the end of a reason; nothing for a secret parameter (its value is never printed)."""
    return "" if param.secret else f", got {_show(value)}"


def _show(value: Any) -> str:
    """A value in a refusal: strings quoted, anything else as YAML."""
    return repr(value) if isinstance(value, str) else value_text(value)


def value_text(value: Any) -> str:
    """A value as the user would type it in YAML: `true`, `3`, `[a, b]`, `{greeting: Hi}`, `'007'` (a string
    that would read as something else is quoted, the mask of a secret is not); never Python's spelling."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if value == REDACTED:
        return REDACTED
    text = yaml.safe_dump(value, default_flow_style=True, width=math.inf, allow_unicode=True, sort_keys=False)
    return text.removesuffix("\n").removesuffix("\n...").strip()


def _declared(pkg: Package, name: str) -> Parameter:
    try:
        return pkg.parameter(name)
    except KeyError:
        raise ParameterInvalid(name, f"is not declared by package {pkg.name!r}") from None


def trigger_for_change(pkg: Package, old: Mapping[str, Any], new: Mapping[str, Any]) -> str | None:
    """The plan a change of parameter values runs (DESIGN §4 "Triggers"), or None when nothing changed.

    Names the package does not declare are ignored: no template can use them.
    """
    changed = [p for p in pkg.parameters if old.get(p.name) != new.get(p.name)]
    for param in sorted(changed, key=lambda p: p.name):
        if param.immutable:
            raise ImmutableParameterChanged(param.name)
    plans = {p.name: p.trigger or pkg.default_trigger() for p in changed}
    wanted = set(plans.values())
    if not wanted:
        return None
    if "deploy" in wanted:
        return "deploy"
    if len(wanted) == 1:
        return wanted.pop()
    listed = ", ".join(f"{name} (plan {plan})" for name, plan in sorted(plans.items()))
    raise PermanentError(f"the change is refused because its parameters trigger different plans: {listed}")


def redact(pkg: Package, values: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `values` with the values of secret parameters replaced by `*****`."""
    secret = {p.name for p in pkg.parameters if p.secret}
    return {k: (REDACTED if k in secret and v is not None else v) for k, v in values.items()}
