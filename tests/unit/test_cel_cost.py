"""The static cost estimator of CRD validation rules (engine.cel.cost), its parser, the schema size bounds and the
budget's words. Each expected cost was checked against kube-apiserver v1.37.2: a rule of that cost on a list's
items with maxItems k (k chosen so that cost times k is just over the 10,000,000 budget) is refused with the
factor that cost times k gives, written to six decimals."""

from __future__ import annotations

from typing import Any

import pytest

from engine.apiserver import celcosts
from engine.cel import cost, decls, syntax


def strings(max_length: int | None = None) -> dict[str, Any]:
    return {"type": "string", **({"maxLength": max_length} if max_length is not None else {})}


ITEM: dict[str, Any] = {"type": "object", "properties": {
    "s": strings(100), "u": strings(), "t": strings(20), "l": {"type": "array", "maxItems": 20, "items": strings(30)},
    "m": {"type": "object", "maxProperties": 5, "additionalProperties": strings(10)},
    "n": {"type": "integer"}, "b": {"type": "boolean"}, "q": {"x-kubernetes-int-or-string": True, "maxLength": 12},
    "objs": {"type": "array", "maxItems": 5, "items": {"type": "object", "properties": {
        "name": strings(10), "tags": {"type": "array", "maxItems": 3, "items": strings(5)}}}},
    "ints": {"type": "array", "maxItems": 50, "items": {"type": "integer"}},
    "sub": {"type": "object", "properties": {"x": strings(40), "y": {"type": "integer"}}},
}}


def estimated(rule: str) -> int:
    typed = decls.decl_of(ITEM)
    assert typed is not None
    return cost.estimate(rule, {"self": typed, "oldSelf": typed}).max


@pytest.mark.parametrize(("rule", "expected"), [
    ("self.s == 'abc'", 3),
    ("self.n < 5", 3),
    ("self.b", 2),
    ("has(self.sub.x) && self.sub.x.size() < 10", 7),
    ("self.s.contains(self.t)", 324),
    ("self.s.matches('^[a-z]+$')", 84),
    ("self.s.upperAscii().contains('A')", 82),
    ("self.s.replace('a', 'bcd') == self.t", 92),
    ("self.s.split(',', 2).size() < 3", 84),
    ("self.l.join() == self.s", 284),
    ("self.s.charAt(2) == 'a'", 4),
    ("self.l.all(x, x.size() < 5)", 123),
    ("self.l.map(x, x.size()).all(n, n < 5)", 394),
    ("self.m.all(k, self.m[k] == k)", 43),
    ("'a' in self.l", 22),
    ("self.n in [1, 2, 3]", 15),
    ("self.l[0] == self.t", 13),
    ("self.l.isSorted()", 262),
    ("self.l.indexOf('a') > 1", 263),
    ("self.q == 'x' || self.q == 3", 6),
    ("(self.n > 3 ? self.s : self.t).contains('x')", 45),
    ("{'a': self.s}.all(k, k == 'a')", 37),
    ("self.s + self.t == 'ab'", 53),
    ("string(self.n) == self.t", 13),
    ("quantity(self.t).isLessThan(quantity('10Gi'))", 12),
    ("cidr(self.t).containsCIDR(self.s)", 59),
    ("url(self.s) == url('https://a')", 44),
    ("self.sub == oldSelf.sub", 4),
    ("'%s-%d'.format([self.s, self.n]) == self.t", 25),
    ("self.objs.all(o, self.objs.exists_one(p, p.name == o.name))", 288),
    ("self.s.split(',').map(p, p.trim()).all(p, p.size() < 3)", 7694),
])
def test_estimates_match_the_real_server(rule: str, expected: int) -> None:
    assert estimated(rule) == expected


def test_a_selection_in_a_macro_resizes_its_range_as_cel_go_does() -> None:
    # `o.name` is appended to the path `o.tags` shares with it: the inner range is sized as a name (40)
    assert estimated("self.objs.all(o, o.tags.exists(t, t == o.name))") == 1833
    assert estimated("self.objs.all(o, o.tags.exists(t, t == 'abc'))") == 123


def test_joining_items_of_unknown_size_costs_without_bound() -> None:
    assert estimated("['a', 'b'].join() == self.s") > 100 * celcosts.RULE_LIMIT


@pytest.mark.parametrize("rule", [
    "self.l.sort().size() > 0",  # the lists extension's sort
    "self.q + 1 > 2",  # dyn: the overload decides
    "self.l.sortBy(x, x)",  # not covered
    "self.sub.?x.orValue('') == ''",  # optionals
    "string(self.q) == 'a'",  # every conversion overload is kept for dyn
])
def test_constructs_not_covered_are_not_estimated(rule: str) -> None:
    with pytest.raises(cost.Unsupported):
        estimated(rule)


def test_macros_expand_as_cel_go_expands_them() -> None:
    expr = syntax.parse("self.l.exists(x, x == 'a')")
    assert isinstance(expr, syntax.Comprehension)
    assert (expr.iter_var, expr.accu_var) == ("x", syntax.ACCUMULATOR)
    assert isinstance(expr.accu_init, syntax.Literal) and expr.accu_init.value is False
    assert isinstance(expr.step, syntax.Call) and expr.step.function == "_||_"
    has = syntax.parse("has(self.a)")
    assert isinstance(has, syntax.Select) and has.test_only
    negative = syntax.parse("-1")
    assert isinstance(negative, syntax.Literal) and negative.value == -1


def test_schema_bounds() -> None:
    unbounded = decls.decl_of({"type": "array", "items": strings()})
    assert unbounded is not None and unbounded.max_elements == (3 * 1024 * 1024 - 2) // 3
    assert decls.decl_of(strings(10)) == decls.Decl("string", 40, 2)
    enum = decls.decl_of({"type": "string", "enum": ["alpha", "gamma-ray"]})
    assert enum is not None and enum.max_elements == 9
    typed = decls.decl_of({"type": "object", "required": ["name"], "properties": {"name": strings()}})
    assert typed is not None and typed.min_size == 2 + 4 + 2 + 4


def test_go_paths_share_their_array_within_capacity() -> None:
    items = cost.GoPath(["self"], 1, 1).append("objs").append("@items")
    tags, name = items.append("tags"), items.append("name")
    assert tags.items() == name.items() == ["self", "objs", "@items", "name"]


@pytest.mark.parametrize(("estimate", "factor"), [
    (150_400_003, "15.0x"), (11_640_003, "1.164000x"), (1_000_000_001, "more than 100x"), (1_000_000_000, "100.0x"),
])
def test_factors_are_worded_as_the_real_server_words_them(estimate: int, factor: str) -> None:
    assert f"by factor of {factor} (try" in celcosts.exceeds("estimated rule cost", estimate, celcosts.RULE_LIMIT)


def test_cardinality_multiplies_by_the_bounds_above() -> None:
    assert celcosts.child_cardinality({"type": "array", "maxItems": 10}, 3) == 30
    assert celcosts.child_cardinality({"type": "array"}, 3) is None
    assert celcosts.child_cardinality({"type": "object", "additionalProperties": {}, "maxProperties": 4}, 2) == 8
    assert celcosts.child_cardinality({"type": "object", "properties": {}}, 2) == 2
    assert celcosts.child_cardinality({"type": "array", "maxItems": 10}, None) is None


def test_the_schema_total_names_the_four_most_expensive_rules() -> None:
    budget = celcosts.Budget()
    for i in range(6):
        budget.add(f"rule{i}", 20_000_000 + i)
    errors = budget.total_errors("schema")
    assert [e.field for e in errors] == ["rule5", "rule4", "rule3", "rule2", "schema"]
    assert "by factor of 1.200000x" in str(errors[-1].detail)


def test_a_resource_root_has_names_capped_as_the_real_server_caps_them() -> None:
    root = decls.decl_of({"type": "object", "properties": {"spec": {"type": "object", "properties": {}}}}, True)
    assert root is not None
    meta = root.fields["metadata"]
    assert (meta.fields["name"].max_elements, meta.fields["generateName"].max_elements) == (253 * 4, 252 * 4)
    assert root.fields["kind"].max_elements == 3 * 1024 * 1024 - 2
    short = decls.decl_of({"type": "object", "properties": {"metadata": {"type": "object", "properties": {
        "name": strings(20)}}}}, True)
    assert short is not None and short.fields["metadata"].fields["name"].max_elements == 80


def test_an_optional_old_self_is_estimated_through_its_value() -> None:
    typed = decls.decl_of(ITEM)
    assert typed is not None
    variables = {"self": typed, "oldSelf": decls.Decl("optional", elem=typed)}
    # value()'s result has no path: `.l` of it is sized as the rule's own node, an object (0 items), as in cel-go
    assert cost.estimate("self.l.all(x, oldSelf.value().l.exists(y, y == x))", variables).max == 143
    assert cost.estimate("self.l.all(x, oldSelf.hasValue() && oldSelf.value().s.contains(x))", variables).max == 183


def test_type_names_are_sized_by_the_path_of_their_name() -> None:
    # cel-go sizes `string` by the path ["string"], which the size estimator reads as the rule's own node
    typed = decls.decl_of({"x-kubernetes-int-or-string": True, "maxLength": 300})
    assert typed is not None
    assert cost.estimate("type(self) == string", {"self": typed, "oldSelf": typed}).max == 123
    short = decls.decl_of({"x-kubernetes-int-or-string": True, "maxLength": 30})
    assert short is not None
    assert cost.estimate("type(self) == int || self.contains('%')", {"self": short, "oldSelf": short}).max == 28


def test_timestamps_and_durations_are_estimated() -> None:
    typed = decls.decl_of({"type": "object", "properties": {
        "t": {"type": "string", "format": "date-time"}, "d": {"type": "string", "format": "duration"}}})
    assert typed is not None and typed.fields["t"].kind == "timestamp"
    rule = "self.t.getFullYear() > 2000 && self.d < duration('5m')"
    assert cost.estimate(rule, {"self": typed, "oldSelf": typed}).max == 8


@pytest.mark.parametrize(("rule", "expected"), [
    ("self.l.slice(0, 2).size() > 0", 17),
    ("lists.range(3).size() > 0", 16),
    ("sets.contains(self.l, ['a'])", 33),
    ("self.l.distinct().size() > 0", 20 * 20 * 2 + 1 + 10 + 2 + 2),
])
def test_the_lists_and_sets_extensions_are_estimated(rule: str, expected: int) -> None:
    assert estimated(rule) == expected
