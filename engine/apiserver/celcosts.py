"""The cost budget of a CRD's validation rules, checked at CRD create/update as kube-apiserver v1.37.2 checks it.

k8s.io/apiextensions-apiserver pkg/apis/apiextensions/validation: a rule's estimated cost (`engine.cel.cost`)
times the most times its schema node can occur (the product of `maxItems`/`maxProperties` above it, or, under an
unbounded list or map, what fits in a request) must stay within `StaticEstimatedCostLimit`, and the sum over the
schema within `StaticEstimatedCRDCostLimit`. A rule the estimator does not cover costs nothing here (accepted).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.apiserver.status import ErrorType, FieldError
from engine.cel import cost, decls

__all__ = ["CRD_LIMIT", "RULE_LIMIT", "Budget", "child_cardinality", "exceeds"]

RULE_LIMIT = 10_000_000  # StaticEstimatedCostLimit
CRD_LIMIT = 100_000_000  # StaticEstimatedCRDCostLimit
CONTRIBUTED = "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"


def exceeds(name: str, estimated: int, limit: int) -> str:
    """getCostErrorMessage."""
    factor = estimated / limit
    if factor > 100.0:
        words = "more than 100x"
    elif factor < 1.5:
        words = f"{factor:f}x"
    else:
        words = f"{factor:.1f}x"
    return (f"{name} exceeds budget by factor of {words} (try simplifying the rule, or adding maxItems, "
            "maxProperties, and maxLength where arrays, maps, and strings are declared)")


def _times(base: int, cardinality: int) -> int:
    """multiplyWithOverflowGuard."""
    if base == 0:
        return 0
    return cost.MAX if cost.MAX // base < cardinality else base * cardinality


def child_cardinality(node: Mapping[str, Any], cardinality: int | None) -> int | None:
    """childContext: how many times a child of this node can occur (extractMaxElements)."""
    if cardinality is None:
        return None
    kind = node.get("type")
    if kind == "object" and node.get("additionalProperties") is not None:
        most = node.get("maxProperties")
    elif kind == "array":
        most = node.get("maxItems")
    else:
        return cardinality
    return None if most is None else _times(cardinality, max(int(most), 0))


@dataclass
class Budget:
    """TotalCost: the rules' costs over one schema, and the (at most 4) that cost 1% of the limit or more."""

    total: int = 0
    expensive: list[tuple[int, str]] = field(default_factory=list)

    def observe(self, node: Mapping[str, Any], root: bool, spec: Mapping[str, Any], at: str,
                cardinality: int | None, message: bool = True) -> list[FieldError]:
        """The cost errors of one compiled rule (and of its messageExpression, if that compiled too), its costs
        counted in the total."""
        typed = decls.decl_of(node, root)
        if typed is None:
            return []
        old = decls.Decl("optional", elem=typed) if spec.get("optionalOldSelf") is True else typed
        variables = {"self": typed, "oldSelf": old}
        errors = []
        rule = _estimate(str(spec["rule"]), variables)
        if rule is not None:
            times = cardinality if cardinality is not None else \
                decls.MAX_REQUEST_BYTES // (typed.min_size + 1)
            expression = _times(rule, times)
            if expression > RULE_LIMIT:
                errors.append(FieldError(ErrorType.FORBIDDEN, f"{at}.rule",
                                         detail=exceeds("estimated rule cost", expression, RULE_LIMIT)))
            self.add(f"{at}.rule", expression)
        text = str(spec.get("messageExpression") or "").strip() if message else ""
        estimated = _estimate(text, variables) if text else None
        if estimated is not None:
            if estimated > RULE_LIMIT:
                errors.append(FieldError(ErrorType.FORBIDDEN, f"{at}.messageExpression",
                                         detail=exceeds("estimated messageExpression cost", estimated, RULE_LIMIT)))
            self.add(f"{at}.messageExpression", estimated)
        return errors

    def add(self, path: str, amount: int) -> None:
        """ObserveExpressionCost."""
        self.total = min(self.total + amount, cost.MAX)
        if amount < CRD_LIMIT // 100:
            return
        self.expensive.append((amount, path))
        self.expensive = sorted(self.expensive, key=lambda e: -e[0])[:4]

    def total_errors(self, where: str) -> list[FieldError]:
        """The errors of a schema whose rules cost more than the CRD's limit in all."""
        if self.total <= CRD_LIMIT:
            return []
        errors = [FieldError(ErrorType.FORBIDDEN, path, detail=CONTRIBUTED) for _, path in self.expensive]
        name = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema"
        return [*errors, FieldError(ErrorType.FORBIDDEN, where, detail=exceeds(name, self.total, CRD_LIMIT))]


def _estimate(source: str, variables: Mapping[str, decls.Decl]) -> int | None:
    try:
        return cost.estimate(source, variables).max
    except (cost.Unsupported, RecursionError, LookupError, TypeError, AttributeError):
        return None  # a gap of the port is no reason to refuse a CRD
