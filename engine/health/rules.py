"""Health by the package's own rules: expectations on conditions or JSON paths, or CEL expressions, for kinds kplan
has no rule for."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.health.expressions import judge_exprs
from engine.health.jsonpath import MISSING, InvalidRule, parse_path, resolve, same, text
from engine.health.objects import Obj, condition_current, conditions_of, explain, group_kind
from engine.health.verdicts import Status, failed, healthy, progressing, stale
from engine.model import Expectation, HealthRule


@dataclass(frozen=True)
class Outcome:
    """One expectation checked against an object: `wanted` and `actual` are short texts for messages."""

    met: bool
    wanted: str
    actual: str


def by_package_rules(obj: Obj, rules: Sequence[HealthRule]) -> Status | None:
    """The package's verdict, or None when no rule with a healthy expectation covers this kind."""
    matching = [r for r in rules if ("" if r.group == "core" else r.group, r.kind) == group_kind(obj)]
    if not matching:
        return None
    try:
        return judge(obj, matching)
    except InvalidRule as err:
        return failed(obj, f"health rule for {matching[0].kind} is invalid: {err}")


def judge(obj: Obj, rules: Sequence[HealthRule]) -> Status | None:
    by_exprs = next((rule.exprs for rule in rules if rule.exprs is not None), None)
    if by_exprs is not None:
        return judge_exprs(obj, by_exprs)
    if waiting := stale(obj, strict=False):
        return waiting
    for rule in rules:
        if rule.failed and (outcome := check(obj, rule.failed)).met:
            return failed(obj, outcome.actual)
    wanted = [rule.healthy for rule in rules if rule.healthy]
    if not wanted:
        return None
    outcomes = [check(obj, expectation) for expectation in wanted]
    for outcome in outcomes:
        if not outcome.met:
            return progressing(obj, f"waiting for {outcome.wanted} (now {outcome.actual})")
    return healthy(obj, ", ".join(o.wanted for o in outcomes))


def check(obj: Obj, expectation: Expectation) -> Outcome:
    if expectation.condition:
        return check_condition(obj, expectation.condition, expectation.status)
    if expectation.json_path:
        return check_path(obj, expectation.json_path, expectation.equals)
    raise InvalidRule("an expectation needs a condition or a jsonPath")


def check_condition(obj: Obj, kind: str, status: str) -> Outcome:
    wanted = f"{kind}={status}"
    condition = conditions_of(obj).get(kind)
    if condition is None:
        return Outcome(False, wanted, f"no {kind} condition")
    actual = f"{kind}={condition.get('status') or 'Unknown'}"
    why = explain(condition)
    if not condition_current(obj, condition):
        return Outcome(False, wanted, f"{actual} from generation {condition['observedGeneration']}")
    return Outcome(condition.get("status") == status, wanted, f"{actual}: {why}" if why else actual)


def check_path(obj: Obj, path: str, equals: Any) -> Outcome:
    """The value at `path` equals `equals`; with no `equals`, it is present and truthy."""
    value = resolve(obj, parse_path(path))
    wanted = f"{path} = {text(equals)}" if equals is not None else f"{path} set"
    actual = f"{path} unset" if value is MISSING else f"{path} = {text(value)}"
    met = value is not MISSING and (bool(value) if equals is None else same(value, equals))
    return Outcome(met, wanted, actual)
