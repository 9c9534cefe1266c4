"""CRD validation rules (x-kubernetes-validations): the 422 answers of failing rules (message, messageExpression,
fieldPath, reason), transition rules with oldSelf, ratcheting of unchanged values, runtime errors, rules skipped
after blocking schema errors, and CRDs whose rules do not compile."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from engine.devcluster.backends import Cluster

from .helpers import wait_for

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "x-kubernetes-validations": [
        {"rule": "!has(self.spec.max) || self.spec.max >= self.spec.min", "fieldPath": ".spec.max",
         "messageExpression": "self.spec.min > self.spec.max + 1 ? 'max is far below min' : 'max is just below min'"},
        {"rule": "self.metadata.name != 'forbidden'"},
    ],
    "properties": {
        "spec": {
            "type": "object",
            "x-kubernetes-validations": [{"rule": "self.tags.all(t, t.lowerAscii() == t)",
                                          "message": "tags must be lower case"},
                                         {"rule": "!has(self.pick) || self.tags[self.pick] != ''"},
                                         {"rule": "!has(self.__namespace__) || self.__namespace__ != 'kube-system'",
                                          "message": "not in kube-system"},
                                         {"rule": "!has(self.max__dash__size) || self.max__dash__size <= 10"}],
            "properties": {
                "size": {"type": "integer", "maximum": 100,
                         "x-kubernetes-validations": [{"rule": "self <= 5", "message": "size must be at most 5"}]},
                "min": {"type": "integer", "default": 0},
                "max": {"type": "integer"},
                "title": {"type": "string", "maxLength": 64,
                          "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "title is immutable"}]},
                "mode": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [
                    {"rule": "self in ['fast', 'slow']", "reason": "FieldValueForbidden",
                     "message": "mode must be fast or slow"}]},
                "tags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 64}, "default": []},
                "pick": {"type": "integer"},
                "namespace": {"type": "string", "maxLength": 64},
                "level": {"type": "integer", "x-kubernetes-validations": [
                    {"rule": "oldSelf.hasValue() ? self >= oldSelf.value() : self <= 1", "optionalOldSelf": True,
                     "message": "level starts at 1 at most and never decreases"}]},
                "max-size": {"type": "integer"},
                "limits": {"type": "object", "maxProperties": 10, "additionalProperties": {
                    "type": "string", "maxLength": 64, "x-kubernetes-validations": [{"rule": "isQuantity(self)",
                                                                   "message": "must be a quantity"}]}},
                "memory": {"type": "string", "maxLength": 64, "x-kubernetes-validations": [
                    {"rule": "quantity(self).isLessThan(quantity('1Gi'))", "message": "at most 1Gi"}]},
            },
        },
    },
}


def crd(group: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"gizmos.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": schema}}]}}


def create_crd(cluster: Cluster, group: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Create the Gizmo CRD of `group` and wait until its resource is served (the real server takes a moment)."""
    code, answer = cluster.request("POST", CRDS, body=crd(group, schema))
    assert code == 201, answer
    wait_for(cluster, lambda: cluster.request("GET", f"/apis/{group}/v1/gizmos")[0] == 200, timeout=30)
    return dict(answer)


@pytest.fixture
def group(devcluster: Cluster) -> Iterator[str]:
    name = f"c{uuid.uuid4().hex[:8]}.example.com"
    create_crd(devcluster, name, SCHEMA)
    yield name
    devcluster.request("DELETE", f"{CRDS}/gizmos.{name}")


def gizmo(group: str, name: str = "g1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"{group}/v1", "kind": "Gizmo", "metadata": {"name": name}, "spec": spec}


def create(devcluster: Cluster, group: str, namespace: str, body: dict[str, Any]) -> tuple[int, Any]:
    return devcluster.request("POST", f"/apis/{group}/v1/namespaces/{namespace}/gizmos", body=body)


def refused(answer: dict[str, Any], name: str, group: str, *causes: tuple[str, str, str]) -> None:
    """A 422 Invalid whose causes are (reason, field, message) and whose message lists them."""
    listed = [f"{field}: {message}" for _, field, message in causes]
    joined = listed[0] if len(listed) == 1 else "[" + ", ".join(listed) + "]"
    assert (answer["code"], answer["reason"]) == (422, "Invalid"), answer
    assert answer["message"] == f'Gizmo.{group} "{name}" is invalid: {joined}'
    assert answer["details"]["causes"] == [{"reason": r, "message": m, "field": f} for r, f, m in causes]


def test_objects_that_pass_every_rule_are_created(devcluster: Cluster, group: str, namespace: str) -> None:
    code, created = create(devcluster, group, namespace,
                           gizmo(group, size=3, min=1, max=2, title="a", mode="fast", tags=["x"], pick=0,
                                 limits={"cpu": "500m"}, memory="512Mi"))
    assert code == 201, created


def test_a_failing_scalar_rule_names_the_field_and_its_value(devcluster: Cluster, group: str,
                                                             namespace: str) -> None:
    code, answer = create(devcluster, group, namespace, gizmo(group, size=7))
    assert code == 422
    refused(answer, "g1", group, ("FieldValueInvalid", "spec.size", "Invalid value: 7: size must be at most 5"))


def test_an_object_rule_omits_the_value_and_a_string_value_is_quoted(devcluster: Cluster, group: str,
                                                                     namespace: str) -> None:
    code, answer = create(devcluster, group, namespace, gizmo(group, tags=["Up"], limits={"cpu": "lots"}))
    assert code == 422
    refused(answer, "g1", group, ("FieldValueInvalid", "spec", "Invalid value: tags must be lower case"),
            ("FieldValueInvalid", "spec.limits[cpu]", 'Invalid value: "lots": must be a quantity'))


def test_root_rules_use_field_path_message_expression_and_the_nil_path(devcluster: Cluster, group: str,
                                                                       namespace: str) -> None:
    code, answer = create(devcluster, group, namespace, gizmo(group, "forbidden", min=4, max=2))
    assert code == 422
    refused(answer, "forbidden", group,
            ("FieldValueInvalid", "spec.max", "Invalid value: max is far below min"),
            ("FieldValueInvalid", "<nil>", "Invalid value: failed rule: self.metadata.name != 'forbidden'"))


def test_a_reason_changes_the_error_type(devcluster: Cluster, group: str, namespace: str) -> None:
    code, answer = create(devcluster, group, namespace, gizmo(group, mode="medium"))
    assert code == 422
    refused(answer, "g1", group, ("FieldValueForbidden", "spec.mode", "Forbidden: mode must be fast or slow"))


def test_quantity_functions_compare_values(devcluster: Cluster, group: str, namespace: str) -> None:
    code, answer = create(devcluster, group, namespace, gizmo(group, memory="2Gi"))
    assert code == 422
    refused(answer, "g1", group, ("FieldValueInvalid", "spec.memory", 'Invalid value: "2Gi": at most 1Gi'))


def test_a_runtime_error_is_reported_with_the_rule(devcluster: Cluster, group: str, namespace: str) -> None:
    code, answer = create(devcluster, group, namespace, gizmo(group, tags=["a"], pick=3))
    assert code == 422
    refused(answer, "g1", group, ("FieldValueInvalid", "spec",
                                  'Invalid value: "object": index out of bounds: 3 evaluating rule: '
                                  "!has(self.pick) || self.tags[self.pick] != ''"))


def test_property_names_are_escaped_as_the_server_escapes_them(devcluster: Cluster, group: str,
                                                              namespace: str) -> None:
    body = gizmo(group, namespace="kube-system")
    body["spec"]["max-size"] = 11
    code, answer = create(devcluster, group, namespace, body)
    assert code == 422
    refused(answer, "g1", group, ("FieldValueInvalid", "spec", "Invalid value: not in kube-system"),
            ("FieldValueInvalid", "spec", "Invalid value: failed rule: !has(self.max__dash__size) || "
                                          "self.max__dash__size <= 10"))


def test_transition_rules_run_only_on_update(devcluster: Cluster, group: str, namespace: str) -> None:
    code, created = create(devcluster, group, namespace, gizmo(group, title="a"))
    assert code == 201, created
    changed = copy.deepcopy(created)
    changed["spec"]["title"] = "b"
    path = f"/apis/{group}/v1/namespaces/{namespace}/gizmos/g1"
    code, answer = devcluster.request("PUT", path, body=changed)
    assert code == 422
    refused(answer, "g1", group, ("FieldValueInvalid", "spec.title", 'Invalid value: "b": title is immutable'))
    code, answer = devcluster.request("PATCH", path, body={"spec": {"size": 2}},
                                      content_type="application/merge-patch+json")
    assert code == 200, answer


def test_optional_old_self_rules_run_on_create_too(devcluster: Cluster, group: str, namespace: str) -> None:
    code, answer = create(devcluster, group, namespace, gizmo(group, level=3))
    assert code == 422
    refused(answer, "g1", group, ("FieldValueInvalid", "spec.level",
                                  "Invalid value: 3: level starts at 1 at most and never decreases"))
    code, created = create(devcluster, group, namespace, gizmo(group, level=1))
    assert code == 201, created
    path = f"/apis/{group}/v1/namespaces/{namespace}/gizmos/g1"
    code, answer = devcluster.request("PATCH", path, body={"spec": {"level": 0}},
                                      content_type="application/merge-patch+json")
    assert code == 422
    refused(answer, "g1", group, ("FieldValueInvalid", "spec.level",
                                  "Invalid value: 0: level starts at 1 at most and never decreases"))
    code, answer = devcluster.request("PATCH", path, body={"spec": {"level": 5}},
                                      content_type="application/merge-patch+json")
    assert code == 200, answer


def test_blocking_schema_errors_skip_the_rules(devcluster: Cluster, group: str, namespace: str) -> None:
    code, answer = create(devcluster, group, namespace, gizmo(group, size="big", mode="medium"))
    assert code == 422
    refused(answer, "g1", group,
            ("FieldValueTypeInvalid", "spec.size", 'Invalid value: "string": spec.size in body must be of type '
                                                   'integer: "string"'),
            ("FieldValueInvalid", "<nil>", "Invalid value: null: some validation rules were not checked because "
                                           "the object was invalid; correct the existing errors to complete "
                                           "validation"))


def test_unchanged_values_ratchet_past_a_new_rule(devcluster: Cluster, http: Any, namespace: str) -> None:
    name = f"r{uuid.uuid4().hex[:8]}.example.com"
    loose = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer"}, "note": {"type": "string"}}}}}
    create_crd(devcluster, name, loose)
    try:
        code, created = create(devcluster, name, namespace, gizmo(name, size=9, note="a"))
        assert code == 201, created
        _, strict = devcluster.request("GET", f"{CRDS}/gizmos.{name}")
        strict["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["size"][
            "x-kubernetes-validations"] = [{"rule": "self <= 5"}]
        code, updated = devcluster.request("PUT", f"{CRDS}/gizmos.{name}", body=strict)
        assert code == 200, updated
        path = f"/apis/{name}/v1/namespaces/{namespace}/gizmos/g1"
        wait_for(devcluster, lambda: devcluster.request(  # the real server takes a moment to serve the new schema
            "PATCH", path, query={"dryRun": "All"}, body={"spec": {"size": 8}},
            content_type="application/merge-patch+json")[0] == 422, timeout=30)
        patched = http("PATCH", path, body={"spec": {"note": "b"}}, content_type="application/merge-patch+json")
        assert patched.status == 200, patched.body
        assert patched.headers.get_all("Warning") == ['299 - "spec.size: Invalid value: 9: failed rule: self <= 5"']
        code, answer = devcluster.request("PATCH", path, body={"spec": {"size": 8}},
                                          content_type="application/merge-patch+json")
        assert code == 422
        refused(answer, "g1", name, ("FieldValueInvalid", "spec.size", "Invalid value: 8: failed rule: self <= 5"))
    finally:
        devcluster.request("DELETE", f"{CRDS}/gizmos.{name}")


def rule_path(prop: str = "spec") -> str:
    return f"spec.validation.openAPIV3Schema.properties[{prop}].x-kubernetes-validations[0]"


def go_rule(rule: str, **fields: Any) -> str:
    """The internal ValidationRule as the server prints it (Go field names, <> escaped as Go's json does)."""
    text = rule.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").replace('"', '\\"')
    message = fields.get("message", "")
    return (f'{{"Rule":"{text}","Message":"{message}","MessageExpression":"","Reason":null,"FieldPath":"",'
            '"OptionalOldSelf":null}')


@pytest.mark.parametrize(("rule", "detail"), [
    ("self.size >", "compilation failed: ERROR: <input>:1:12: Syntax error: mismatched input '<EOF>' expecting "
                    "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, "
                    "BYTES, IDENTIFIER}\n | self.size >\n | ...........^"),
    ("self.nope == 1", "compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n"
                       " | ....^"),
    ("nobody > 1", "compilation failed: ERROR: <input>:1:1: undeclared reference to 'nobody' (in container '')\n"
                   " | nobody > 1\n | ^"),
    ("self.size", "cel expression must evaluate to a bool"),
])
def test_a_crd_whose_rule_does_not_compile_is_refused(devcluster: Cluster, rule: str, detail: str) -> None:
    name = f"b{uuid.uuid4().hex[:8]}.example.com"
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}},
                                                        "x-kubernetes-validations": [{"rule": rule}]}}}
    code, answer = devcluster.request("POST", CRDS, body=crd(name, schema))
    assert (code, answer["reason"]) == (422, "Invalid"), answer
    field = f"{rule_path()}.rule"
    body = f"Invalid value: {go_rule(rule)}: {detail}"
    assert answer["message"] == (f'CustomResourceDefinition.apiextensions.k8s.io "gizmos.{name}" is invalid: '
                                 f"{field}: {body}")
    assert answer["details"]["causes"] == [{"reason": "FieldValueInvalid", "message": body, "field": field}]


def test_optional_old_self_without_old_self_is_refused(devcluster: Cluster) -> None:
    name = f"b{uuid.uuid4().hex[:8]}.example.com"
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}},
                                                        "x-kubernetes-validations": [
                                                            {"rule": "self.size > 0", "optionalOldSelf": True}]}}}
    code, answer = devcluster.request("POST", CRDS, body=crd(name, schema))
    assert (code, answer["reason"]) == (422, "Invalid"), answer
    assert [(c["field"], c["message"]) for c in answer["details"]["causes"]] == [
        (f"{rule_path()}.optionalOldSelf", "Invalid value: true: may not be set if oldSelf is not used in rule")]


def test_old_self_below_an_atomic_list_is_refused(devcluster: Cluster) -> None:
    name = f"b{uuid.uuid4().hex[:8]}.example.com"
    items = {"type": "string", "maxLength": 64, "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "tags": {"type": "array", "maxItems": 10, "items": items}}}}}
    code, answer = devcluster.request("POST", CRDS, body=crd(name, schema))
    assert (code, answer["reason"]) == (422, "Invalid"), answer
    tags = "spec.validation.openAPIV3Schema.properties[spec].properties[tags]"
    assert [(c["field"], c["message"]) for c in answer["details"]["causes"]] == [
        (f"{tags}.items.x-kubernetes-validations[0].rule", 'Invalid value: "self == oldSelf": oldSelf cannot be used '
                                                          f"on the uncorrelatable portion of the schema within {tags}")]


def test_a_rule_with_a_bad_reason_or_field_path_is_refused(devcluster: Cluster) -> None:
    name = f"b{uuid.uuid4().hex[:8]}.example.com"
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}},
                                                        "x-kubernetes-validations": [
                                                            {"rule": "true", "reason": "Nope", "fieldPath": ".nope"}]}}}
    code, answer = devcluster.request("POST", CRDS, body=crd(name, schema))
    assert (code, answer["reason"]) == (422, "Invalid"), answer
    assert [(c["field"], c["message"]) for c in answer["details"]["causes"]] == [
        (f"{rule_path()}.reason", 'Unsupported value: "Nope": supported values: "FieldValueDuplicate", '
                                  '"FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"'),
        (f"{rule_path()}.fieldPath", 'Invalid value: ".nope": must be a valid path'),
    ]


def test_map_list_items_correlate_with_their_old_selves_by_key(devcluster: Cluster, namespace: str) -> None:
    name = f"m{uuid.uuid4().hex[:8]}.example.com"
    item = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"},
                                                                    "port": {"type": "integer"}},
            "x-kubernetes-validations": [
                {"rule": "self.port == oldSelf.port", "message": "port is immutable"},
                {"rule": "self.port > 0", "reason": "FieldValueRequired", "message": "a port is needed"},
                {"rule": "self.name != 'dup'", "reason": "FieldValueDuplicate"}]}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"ports": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"], "items": item}}}}}
    create_crd(devcluster, name, schema)
    try:
        ports = [{"name": "http", "port": 80}, {"name": "admin", "port": 81}]
        code, created = create(devcluster, name, namespace, gizmo(name, ports=ports))
        assert code == 201, created
        path = f"/apis/{name}/v1/namespaces/{namespace}/gizmos/g1"
        moved = [{"name": "new", "port": 90}, {"name": "admin", "port": 82}, {"name": "http", "port": 80}]
        code, answer = devcluster.request("PATCH", path, body={"spec": {"ports": moved}},
                                          content_type="application/merge-patch+json")
        assert code == 422
        refused(answer, "g1", name, ("FieldValueInvalid", "spec.ports[1]", "Invalid value: port is immutable"))
        bad = [*ports, {"name": "dup", "port": 0}]
        code, answer = devcluster.request("PATCH", path, body={"spec": {"ports": bad}},
                                          content_type="application/merge-patch+json")
        assert code == 422
        refused(answer, "g1", name, ("FieldValueRequired", "spec.ports[2]", "Required value: a port is needed"),
                ("FieldValueDuplicate", "spec.ports[2]", "Duplicate value"))
    finally:
        devcluster.request("DELETE", f"{CRDS}/gizmos.{name}")


def test_a_missing_field_and_a_dynamic_type_mismatch_are_runtime_errors(devcluster: Cluster,
                                                                        namespace: str) -> None:
    name = f"e{uuid.uuid4().hex[:8]}.example.com"
    schema = {"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-validations": [
        {"rule": "self.label == 'on'", "message": "label must be on"}, {"rule": "self.port > 0"}], "properties": {
        "label": {"type": "string", "maxLength": 8},
        "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}}}}}
    create_crd(devcluster, name, schema)
    try:
        code, answer = create(devcluster, name, namespace, gizmo(name, port="http"))
        assert code == 422
        refused(answer, "g1", name,
                ("FieldValueInvalid", "spec", 'Invalid value: "object": no such key: label evaluating rule: label '
                                              "must be on"),
                ("FieldValueInvalid", "spec", """Invalid value: "object": 'no such overload': call arguments did """
                                              "not match a supported operator, function or macro signature for "
                                              "rule: self.port > 0"))
    finally:
        devcluster.request("DELETE", f"{CRDS}/gizmos.{name}")
