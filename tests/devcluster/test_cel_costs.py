"""The estimated cost of CRD validation rules: a CRD whose rules may cost more than the per-rule or per-schema
budget is refused at creation with the real server's words (the factor, the rule's path, the schema total); one
within budget is accepted."""

from __future__ import annotations

import uuid
from typing import Any

from engine.devcluster.backends import Cluster

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
SCHEMA = "spec.validation.openAPIV3Schema"
AT = f"{SCHEMA}.properties[spec]"
ADVICE = ("(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and "
          "strings are declared)")
CONTRIBUTED = "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"


def rule_cost(factor: str, kind: str = "rule") -> str:
    return f"Forbidden: estimated {kind} cost exceeds budget by factor of {factor} {ADVICE}"


def total_cost(factor: str) -> str:
    return (f"{SCHEMA}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema "
            f"exceeds budget by factor of {factor} {ADVICE}")


def strings(max_items: int | None = None, max_length: int | None = None, rule: str = "") -> dict[str, Any]:
    """A list of strings; `rule`: a validation rule of each string."""
    items: dict[str, Any] = {"type": "string", **({"maxLength": max_length} if max_length is not None else {}),
                             **({"x-kubernetes-validations": [{"rule": rule}]} if rule else {})}
    return {"type": "array", "items": items, **({"maxItems": max_items} if max_items is not None else {})}


def spec(properties: dict[str, Any], *rules: str | dict[str, str]) -> dict[str, Any]:
    written = [r if isinstance(r, dict) else {"rule": r} for r in rules]
    return {"type": "object", "properties": properties, **({"x-kubernetes-validations": written} if rules else {})}


def create(cluster: Cluster, spec_schema: dict[str, Any]) -> tuple[int, str]:
    """Create (dry run) a CRD whose spec has this schema: the code and the message of the answer."""
    schema = {"type": "object", "properties": {"spec": spec_schema}}
    body = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gadgets.costs.example.com"},
            "spec": {"group": "costs.example.com", "scope": "Namespaced",
                     "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}}]}}
    code, answer = cluster.request("POST", CRDS, query={"dryRun": "All"}, body=body)
    return code, str(answer.get("message", "")) if isinstance(answer, dict) else str(answer)


def invalid(*errors: str) -> str:
    listed = ", ".join(errors)
    return f'CustomResourceDefinition.apiextensions.k8s.io "gadgets.costs.example.com" is invalid: [{listed}]'


def test_a_rule_over_an_unbounded_list_is_refused(devcluster: Cluster) -> None:
    code, message = create(devcluster, spec({"names": strings()}, "self.names.all(n, n.contains('abc'))"))
    assert code == 422
    assert message == invalid(f"{AT}.x-kubernetes-validations[0].rule: {rule_cost('more than 100x')}",
                              f"{AT}.x-kubernetes-validations[0].rule: {CONTRIBUTED}",
                              total_cost("more than 100x"))


def test_joining_a_literal_list_is_refused_whatever_the_schema(devcluster: Cluster) -> None:
    code, message = create(devcluster, spec({"name": {"type": "string", "maxLength": 8}},
                                            "['a', 'b'].join() == self.name"))
    assert code == 422
    assert message == invalid(f"{AT}.x-kubernetes-validations[0].rule: {rule_cost('more than 100x')}",
                              f"{AT}.x-kubernetes-validations[0].rule: {CONTRIBUTED}",
                              total_cost("more than 100x"))


def test_a_rule_over_a_large_bounded_list_is_refused_by_its_factor(devcluster: Cluster) -> None:
    code, message = create(devcluster, spec({"names": strings(100_000, 3750)}, "self.names.all(n, n.contains('abc'))"))
    assert code == 422
    assert message == invalid(f"{AT}.x-kubernetes-validations[0].rule: {rule_cost('15.0x')}",
                              f"{AT}.x-kubernetes-validations[0].rule: {CONTRIBUTED}", total_cost("1.5x"))


def test_a_factor_below_one_and_a_half_is_written_with_six_decimals(devcluster: Cluster) -> None:
    code, message = create(devcluster, spec({"names": strings(10_000, 2900)}, "self.names.all(n, n.contains('abc'))"))
    assert code == 422
    assert message == (f'CustomResourceDefinition.apiextensions.k8s.io "gadgets.costs.example.com" is invalid: '
                       f"{AT}.x-kubernetes-validations[0].rule: {rule_cost('1.164000x')}")


def test_a_list_made_by_map_has_items_of_unknown_size(devcluster: Cluster) -> None:
    code, message = create(devcluster, spec({"names": strings(100, 64)},
                                            "self.names.map(n, n.lowerAscii()).join(',').size() < 1000"))
    assert code == 422
    assert message == invalid(f"{AT}.x-kubernetes-validations[0].rule: {rule_cost('more than 100x')}",
                              f"{AT}.x-kubernetes-validations[0].rule: {CONTRIBUTED}",
                              total_cost("more than 100x"))


def test_bounded_lists_and_strings_within_budget_are_accepted(devcluster: Cluster) -> None:
    rules = ("self.names.all(n, n.contains('abc') && self.names.exists(m, m.startsWith(n)))",
             "self.names.join(',').size() < 1000", "self.title.matches('^[a-z]+$')",
             "self.labels.all(k, self.labels[k].size() < 10)")
    code, message = create(devcluster, spec({"names": strings(100, 64), "title": {"type": "string", "maxLength": 256},
                                             "labels": {"type": "object", "maxProperties": 20,
                                                        "additionalProperties": {"type": "string", "maxLength": 63}}},
                                            *rules))
    assert (code, message) == (201, "")


def test_a_rule_under_an_unbounded_list_costs_as_often_as_its_node_fits_in_a_request(devcluster: Cluster) -> None:
    code, message = create(devcluster, spec({"names": strings(max_length=64, rule="self.contains('abc')")}))
    assert code == 422
    at = f"{AT}.properties[names].items.x-kubernetes-validations[0].rule"
    assert message == (f'CustomResourceDefinition.apiextensions.k8s.io "gadgets.costs.example.com" is invalid: '
                       f"{at}: {rule_cost('2.8x')}")


def test_a_message_expression_has_its_own_budget(devcluster: Cluster) -> None:
    code, message = create(devcluster, spec({"names": strings()}, {"rule": "size(self.names) < 10",
                                                                    "messageExpression": "self.names.join(', ')"}))
    assert code == 422
    at = f"{AT}.x-kubernetes-validations[0].messageExpression"
    assert message == invalid(f"{at}: {rule_cost('more than 100x', 'messageExpression')}", f"{at}: {CONTRIBUTED}",
                              total_cost("more than 100x"))


def test_rules_within_their_budget_are_refused_when_the_schema_total_exceeds_its_own(devcluster: Cluster) -> None:
    rules = [f"self.names.all(n, n.contains('ab{chr(ord('a') + i)}'))" for i in range(13)]
    code, message = create(devcluster, spec({"names": strings(20_000, 1000)}, *rules))
    assert code == 422
    assert message == invalid(*(f"{AT}.x-kubernetes-validations[{i}].rule: {CONTRIBUTED}" for i in range(4)),
                              total_cost("1.050400x"))


def test_rule_errors_are_listed_from_the_deepest_node_up(devcluster: Cluster) -> None:
    names = strings(max_length=64, rule="self.contains('abc')")
    code, message = create(devcluster, spec({"names": names, "tags": strings(10, 10)},
                                            "self.tags.all(t, t.nope)", "self.tags.size() < 3"))
    assert code == 422
    assert message.index(f"{AT}.properties[names].items.x-kubernetes-validations[0].rule: Forbidden") < \
        message.index(f"{AT}.x-kubernetes-validations[0].rule: Invalid value")


def test_a_schema_error_below_a_rule_leaves_its_cost_unchecked(devcluster: Cluster) -> None:
    bad_reason = {"type": "string", "maxLength": 3, "x-kubernetes-validations": [{"rule": "self != 'a'",
                                                                                  "reason": "Nope"}]}
    code, message = create(devcluster, spec({"names": strings(), "code": bad_reason},
                                            "self.names.all(n, n.contains('abc'))"))
    assert code == 422
    assert message == (f'CustomResourceDefinition.apiextensions.k8s.io "gadgets.costs.example.com" is invalid: '
                       f'{AT}.properties[code].x-kubernetes-validations[0].reason: Unsupported value: "Nope": '
                       'supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", '
                       '"FieldValueRequired"')


def test_an_update_that_makes_a_rule_too_expensive_is_refused(devcluster: Cluster) -> None:
    group = f"u{uuid.uuid4().hex[:8]}.costs.example.com"
    body = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"gadgets.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {"spec": spec({"names": strings(10, 10)},
                                                                       "self.names.all(n, n.contains('abc'))")}}}}]}}
    code, created = devcluster.request("POST", CRDS, body=body)
    assert code == 201, created
    try:
        for _ in range(20):  # the server's controllers update its status meanwhile: retry on a conflict
            code, current = devcluster.request("GET", f"{CRDS}/gadgets.{group}")
            assert code == 200, current
            version = {**current["spec"]["versions"][0], "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": spec({"names": strings(10_000, 2900)},
                                                              "self.names.all(n, n.contains('abc'))")}}}}
            changed = {**current, "spec": {**current["spec"], "versions": [version]}}
            code, answer = devcluster.request("PUT", f"{CRDS}/gadgets.{group}", body=changed)
            if code != 409:
                break
        assert code == 422
        assert answer["message"] == (f'CustomResourceDefinition.apiextensions.k8s.io "gadgets.{group}" is invalid: '
                                     f"{AT}.x-kubernetes-validations[0].rule: {rule_cost('1.164000x')}")
    finally:
        assert devcluster.request("DELETE", f"{CRDS}/gadgets.{group}")[0] == 200


def test_a_rule_is_costed_even_when_its_message_expression_does_not_compile(devcluster: Cluster) -> None:
    code, message = create(devcluster, spec({"names": strings()}, {"rule": "self.names.all(n, n.contains('a'))",
                                                                    "messageExpression": "1"}))
    assert code == 422
    at = f"{AT}.x-kubernetes-validations[0]"
    assert message.startswith(f'CustomResourceDefinition.apiextensions.k8s.io "gadgets.costs.example.com" is '
                              f"invalid: [{at}.rule: {rule_cost('more than 100x')}, {at}.messageExpression: Invalid "
                              "value: ")
    assert message.endswith(f"messageExpression must evaluate to a string, {at}.rule: {CONTRIBUTED}, "
                            f"{total_cost('more than 100x')}]")
