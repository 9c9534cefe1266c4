"""Server-side apply core without HTTP: schemas, FieldsV1 sets, merge, prune, conflicts and managedFields."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from engine.apiserver import fieldpath
from engine.apiserver.schema import Schemas, TypeNode
from engine.apiserver.ssa import ApplyConflict, apply, same_but_managed_times, track_update

T0, T1, T2, T3, T4 = (f"2025-01-01T00:0{i}:00Z" for i in range(5))
WIDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "properties": {
            "replicas": {"type": "integer"},
            "size": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "properties": {"name": {"type": "string"},
                                                                 "port": {"type": "integer"}}}},
            "endpoints": {"type": "array", "x-kubernetes-list-type": "map",
                          "x-kubernetes-list-map-keys": ["host", "protocol"],
                          "items": {"type": "object", "properties": {
                              "host": {"type": "string"}, "protocol": {"type": "string", "default": "TCP"}}}},
            "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                         "additionalProperties": {"type": "string"}},
            "settings": {"type": "object", "additionalProperties": {"type": "string"}},
            "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        }},
        "status": {"type": "object", "properties": {
            "phase": {"type": "string"},
            "conditions": {"type": "array", "items": {"type": "object", "properties": {
                "type": {"type": "string"}, "status": {"type": "string"}}}},
        }},
    },
}


@pytest.fixture(scope="module")
def schemas() -> Schemas:
    registry = Schemas.builtin()
    registry.register_crd("example.com", "v1", "Widget", WIDGET_SCHEMA)
    return registry


@pytest.fixture(scope="module")
def deployment_type(schemas: Schemas) -> TypeNode:
    return schemas.for_kind("apps/v1", "Deployment")


@pytest.fixture(scope="module")
def widget_type(schemas: Schemas) -> TypeNode:
    return schemas.for_kind("example.com/v1", "Widget")


def deployment(**spec: Any) -> dict[str, Any]:
    containers = spec.pop("containers", [{"name": "nginx", "image": "nginx:1.25", "ports": [{"containerPort": 80}]}])
    pod_spec = {"containers": containers, **spec.pop("pod", {})}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", **spec.pop("metadata", {})},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec}, **spec}}


def widget(spec: dict[str, Any] | None = None, **metadata: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1", **metadata}}
    if spec is not None:
        out["spec"] = spec
    return out


def entries(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return list(obj["metadata"].get("managedFields", []))


def entry(obj: dict[str, Any], manager: str, operation: str = "Apply", subresource: str | None = None
          ) -> dict[str, Any]:
    found = [e for e in entries(obj)
             if (e["manager"], e["operation"], e.get("subresource")) == (manager, operation, subresource)]
    assert len(found) == 1, f"{manager}/{operation} in {entries(obj)}"
    return found[0]


def fields(obj: dict[str, Any], manager: str, operation: str = "Apply") -> dict[str, Any]:
    return entry(obj, manager, operation)["fieldsV1"]  # type: ignore[no-any-return]


def apply_as(manager: str, live: dict[str, Any] | None, config: dict[str, Any], type_: TypeNode,
             now: str = T0, force: bool = False, **kwargs: Any) -> dict[str, Any]:
    return apply(live, config, type_=type_, manager=manager, force=force,
                 api_version=config["apiVersion"], now=now, **kwargs)


def update_as(manager: str, old: dict[str, Any] | None, new: dict[str, Any], type_: TypeNode,
              now: str = T1, **kwargs: Any) -> dict[str, Any]:
    return track_update(old, new, type_=type_, manager=manager, api_version=new["apiVersion"], now=now, **kwargs)


def edited(obj: dict[str, Any], change: Any) -> dict[str, Any]:
    """A copy of an object changed by `change(copy)`, as a client would PUT it back."""
    out = copy.deepcopy(obj)
    change(out)
    return out


# --- field sets -------------------------------------------------------------------------------------------


def test_apply_entry_tracks_leaves_items_and_atomic_values(deployment_type: TypeNode) -> None:
    config = deployment(replicas=2, metadata={"labels": {"app": "web"}}, containers=[
        {"name": "nginx", "image": "nginx:1.25", "command": ["nginx", "-g"], "ports": [{"containerPort": 80}],
         "env": [{"name": "MODE", "value": "prod"}]}], pod={"nodeSelector": {"disk": "ssd"}})
    out = apply_as("alice", None, config, deployment_type)
    assert fields(out, "alice") == {
        "f:metadata": {"f:labels": {"f:app": {}}},
        "f:spec": {
            "f:replicas": {},
            "f:selector": {},
            "f:template": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:containers": {'k:{"name":"nginx"}': {
                        ".": {}, "f:command": {},
                        "f:env": {'k:{"name":"MODE"}': {".": {}, "f:name": {}, "f:value": {}}},
                        "f:image": {}, "f:name": {},
                        "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}}},
                    "f:nodeSelector": {},
                },
            },
        },
    }
    assert entry(out, "alice") == {"manager": "alice", "operation": "Apply", "apiVersion": "apps/v1", "time": T0,
                                   "fieldsType": "FieldsV1", "fieldsV1": fields(out, "alice")}


def test_apply_entry_of_service_keys_ports_by_port_and_defaulted_protocol(schemas: Schemas) -> None:
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
               "spec": {"selector": {"app": "web"}, "ports": [{"port": 443, "targetPort": 8443},
                                                              {"port": 53, "protocol": "UDP"}]}}
    out = apply_as("alice", None, service, schemas.for_kind("v1", "Service"))
    spec = fields(out, "alice")["f:spec"]
    assert spec["f:selector"] == {}
    assert list(spec["f:ports"]) == ['k:{"port":53,"protocol":"UDP"}', 'k:{"port":443,"protocol":"TCP"}']


def test_apply_entry_tracks_set_items_atomic_owner_references_and_empty_values(schemas: Schemas) -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "c", "namespace": "default", "uid": "u1", "resourceVersion": "7",
                           "generation": 3, "creationTimestamp": None, "annotations": {},
                           "finalizers": ["example.com/a", "example.com/b"],
                           "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "123"}]},
              "data": {"k": "v", "empty": ""}}
    out = apply_as("alice", None, config, schemas.for_kind("v1", "ConfigMap"))
    assert fields(out, "alice") == {
        "f:data": {"f:empty": {}, "f:k": {}},
        "f:metadata": {"f:annotations": {},
                       "f:finalizers": {'v:"example.com/a"': {}, 'v:"example.com/b"': {}},
                       "f:ownerReferences": {'k:{"uid":"123"}': {}}},
    }


def test_apply_entry_of_untyped_map_marks_entries_with_children(widget_type: TypeNode) -> None:
    config = widget({"extra": {"nested": {"a": 1}, "list": [1, 2]}, "settings": {"x": "1"}, "size": None})
    out = apply_as("alice", None, config, widget_type)
    assert fields(out, "alice")["f:spec"] == {
        "f:extra": {"f:list": {}, "f:nested": {".": {}, "f:a": {}}},
        "f:settings": {"f:x": {}},
        "f:size": {},
    }
    assert "size" not in out["spec"]


def test_update_entry_marks_parents_it_created(schemas: Schemas, widget_type: TypeNode) -> None:
    configmap = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"a": "b"}},
                 "data": {"k": "v"}}
    created = update_as("kubectl-create", None, configmap, schemas.for_kind("v1", "ConfigMap"), now=T0)
    assert entries(created) == [{
        "manager": "kubectl-create", "operation": "Update", "apiVersion": "v1", "time": T0, "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {".": {}, "f:k": {}}, "f:metadata": {"f:labels": {".": {}, "f:a": {}}}}}]
    cr = update_as("OpenAPI-Generator", None, widget({"replicas": 1, "ports": [{"name": "http", "port": 80}]}),
                   widget_type, now=T0)
    assert fields(cr, "OpenAPI-Generator", "Update") == {"f:spec": {
        ".": {}, "f:ports": {".": {}, 'k:{"name":"http"}': {".": {}, "f:name": {}, "f:port": {}}}, "f:replicas": {}}}


def test_update_entry_takes_modified_leaves_only(deployment_type: TypeNode) -> None:
    live = apply_as("alice", None, deployment(replicas=2, metadata={"labels": {"app": "web"}}), deployment_type)
    scaled = update_as("kubectl", live, edited(live, lambda o: o["spec"].update(replicas=5)), deployment_type)
    assert fields(scaled, "kubectl", "Update") == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in fields(scaled, "alice")["f:spec"]


def test_fields_v1_round_trip_sibling_order_and_rendering() -> None:
    paths = {
        (("f", "spec"), ("f", "ports")),
        (("f", "spec"), ("f", "ports"), fieldpath.key_element({"port": 443, "protocol": "TCP"})),
        (("f", "spec"), ("f", "ports"), fieldpath.key_element({"protocol": "TCP", "port": 80})),
        (("f", "spec"), ("f", "ports"), fieldpath.key_element({"protocol": "TCP", "port": 80}), ("f", "port")),
        (("f", "metadata"), ("f", "finalizers"), fieldpath.value_element("a/b")),
        (("f", "spec"), ("f", "list"), ("i", "3")),
    }
    encoded = fieldpath.to_fields_v1(paths)
    assert json.dumps(encoded, separators=(",", ":")) == (
        '{"f:metadata":{"f:finalizers":{"v:\\"a/b\\"":{}}},"f:spec":{"f:list":{"i:3":{}},"f:ports":{".":{},'
        '"k:{\\"port\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:port":{}},"k:{\\"port\\":443,\\"protocol\\":\\"TCP\\"}":{}}}}')
    assert fieldpath.from_fields_v1(encoded) == frozenset(paths)
    rendered = [fieldpath.render(p) for p in fieldpath.iterate(paths)]
    assert rendered == ['.metadata.finalizers[="a/b"]', ".spec.ports", ".spec.list[3]",
                        '.spec.ports[port=80,protocol="TCP"]', '.spec.ports[port=443,protocol="TCP"]',
                        '.spec.ports[port=80,protocol="TCP"].port']
    image = (("f", "spec"), ("f", "containers"), fieldpath.key_element({"name": "nginx"}), ("f", "image"))
    assert fieldpath.render(image) == '.spec.containers[name="nginx"].image'


def test_field_sets_sharing_subtrees_encode_each_its_own_parts() -> None:
    def owned_by(uid: str) -> set[fieldpath.Path]:
        owner = (("f", "metadata"), ("f", "ownerReferences"), fieldpath.key_element({"uid": uid}))
        return {(("f", "spec"), ("f", "replicas")), (("f", "metadata"), ("f", "labels"), ("f", "app")), owner,
                (*owner, ("f", "name"))}

    first, second = fieldpath.to_fields_v1(owned_by("a")), fieldpath.to_fields_v1(owned_by("b"))
    assert first["f:spec"] == second["f:spec"] == {"f:replicas": {}}
    assert first["f:metadata"]["f:ownerReferences"] == {'k:{"uid":"a"}': {".": {}, "f:name": {}}}
    assert second["f:metadata"]["f:ownerReferences"] == {'k:{"uid":"b"}': {".": {}, "f:name": {}}}
    assert fieldpath.from_fields_v1(second) == frozenset(owned_by("b"))


@pytest.mark.parametrize("bad", [[], {"x:1": {}}, {"f:a": []}, {"k:[1]": {}}, {"i:x": {}}])
def test_malformed_fields_v1_is_rejected(bad: Any) -> None:
    with pytest.raises(ValueError):
        fieldpath.from_fields_v1(bad)


# --- the worked example (APISERVER §1.9) --------------------------------------------------------------------


def test_worked_example_alice_and_bob(widget_type: TypeNode) -> None:
    alice_config = widget({"replicas": 2, "ports": [{"name": "http", "port": 80}]}, labels={"app": "w"})
    created = apply_as("alice", None, alice_config, widget_type, now=T0)
    assert entries(created) == [{
        "manager": "alice", "operation": "Apply", "apiVersion": "example.com/v1", "time": T0,
        "fieldsType": "FieldsV1", "fieldsV1": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:ports": {'k:{"name":"http"}': {".": {}, "f:name": {}, "f:port": {}}},
                       "f:replicas": {}}}}]

    shared = apply_as("bob", created, widget({"replicas": 2}), widget_type, now=T1)
    assert shared["spec"] == created["spec"]
    assert entry(shared, "bob") == {"manager": "bob", "operation": "Apply", "apiVersion": "example.com/v1",
                                    "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}
    assert fields(shared, "alice") == fields(created, "alice")

    with pytest.raises(ApplyConflict) as raised:
        apply_as("bob", shared, widget({"replicas": 3}), widget_type, now=T2)
    assert raised.value.status() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas', "reason": "Conflict",
        "details": {"causes": [{"reason": "FieldManagerConflict", "message": 'conflict with "alice"',
                                "field": ".spec.replicas"}]},
        "code": 409}

    forced = apply_as("bob", shared, widget({"replicas": 3}), widget_type, now=T2, force=True)
    assert forced["spec"]["replicas"] == 3
    assert entry(forced, "bob")["time"] == T2
    assert "f:replicas" not in fields(forced, "alice")["f:spec"]

    without_replicas = apply_as("alice", forced, widget({"ports": [{"name": "http", "port": 80}]}, labels={"app": "w"}),
                                widget_type, now=T3)
    assert without_replicas["spec"]["replicas"] == 3
    assert entry(without_replicas, "alice")["time"] == T0

    without_labels = apply_as("alice", without_replicas, widget({"ports": [{"name": "http", "port": 80}]}),
                              widget_type, now=T4)
    assert "labels" not in without_labels["metadata"]
    assert entry(without_labels, "alice")["time"] == T4
    assert [e["manager"] for e in entries(without_labels)] == ["bob", "alice"]


# --- merge ------------------------------------------------------------------------------------------------


def test_apply_merges_containers_env_ports_and_volumes_per_key(deployment_type: TypeNode) -> None:
    live = apply_as("ops", None, deployment(
        containers=[{"name": "nginx", "image": "nginx:1.25", "env": [{"name": "A", "value": "1"}],
                     "ports": [{"containerPort": 80}]},
                    {"name": "sidecar", "image": "envoy:1"}],
        pod={"volumes": [{"name": "data", "emptyDir": {}}]}), deployment_type)
    out = apply_as("dev", live, deployment(
        containers=[{"name": "nginx", "env": [{"name": "B", "value": "2"}],
                     "ports": [{"containerPort": 80, "protocol": "UDP"}]}],
        pod={"volumes": [{"name": "cache", "emptyDir": {}}]}), deployment_type, now=T1)
    pod = out["spec"]["template"]["spec"]
    assert pod["containers"] == [
        {"name": "nginx", "image": "nginx:1.25", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
         "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP"}]},
        {"name": "sidecar", "image": "envoy:1"}]
    assert [v["name"] for v in pod["volumes"]] == ["data", "cache"]


@pytest.mark.parametrize(("live", "config", "merged"), [
    (["a", "b", "c"], ["c", "a"], ["b", "c", "a"]),
    (["a", "b", "c"], ["a", "x", "c"], ["a", "b", "x", "c"]),
    (["a", "b"], ["x", "b", "y"], ["a", "x", "b", "y"]),
    ([], ["x", "y"], ["x", "y"]),
])
def test_merged_list_order(widget_type: TypeNode, live: list[str], config: list[str], merged: list[str]) -> None:
    before = apply_as("ops", None, widget({"ports": [{"name": n} for n in live]}), widget_type)
    after = apply_as("dev", before, widget({"ports": [{"name": n} for n in config]}), widget_type, now=T1)
    assert [p["name"] for p in after["spec"]["ports"]] == merged


def test_atomic_lists_maps_and_structs_are_replaced(deployment_type: TypeNode) -> None:
    live = apply_as("ops", None, deployment(
        containers=[{"name": "nginx", "command": ["a", "b"], "args": ["-x"]}],
        pod={"tolerations": [{"key": "k1", "operator": "Exists"}], "nodeSelector": {"disk": "ssd", "zone": "a"}},
        selector={"matchLabels": {"app": "web", "tier": "fe"}}), deployment_type)
    out = apply_as("dev", live, deployment(
        containers=[{"name": "nginx", "command": ["c"]}],
        pod={"tolerations": [{"key": "k2", "operator": "Exists"}], "nodeSelector": {"zone": "b"}},
        selector={"matchLabels": {"app": "web"}}), deployment_type, force=True, now=T1)
    pod = out["spec"]["template"]["spec"]
    assert pod["containers"] == [{"name": "nginx", "command": ["c"], "args": ["-x"]}]
    assert pod["tolerations"] == [{"key": "k2", "operator": "Exists"}]
    assert pod["nodeSelector"] == {"zone": "b"}
    assert out["spec"]["selector"] == {"matchLabels": {"app": "web"}}


def test_crd_lists_without_list_type_are_atomic(widget_type: TypeNode) -> None:
    live = apply_as("ctrl-a", None, widget(), widget_type)
    live["status"] = {}
    first = apply_as("ctrl-a", live, {**widget(), "status": {"conditions": [{"type": "A", "status": "True"}]}},
                     widget_type, now=T1)
    assert fields(first, "ctrl-a") == {"f:status": {"f:conditions": {}}}
    with pytest.raises(ApplyConflict) as raised:
        apply_as("ctrl-b", first, {**widget(), "status": {"conditions": [{"type": "B", "status": "True"}]}},
                 widget_type, now=T2)
    assert raised.value.conflicts == (('"ctrl-a"', ".status.conditions"),)
    forced = apply_as("ctrl-b", first, {**widget(), "status": {"conditions": [{"type": "B", "status": "True"}]}},
                      widget_type, now=T2, force=True)
    assert forced["status"]["conditions"] == [{"type": "B", "status": "True"}]


def test_granular_maps_merge_per_key(schemas: Schemas) -> None:
    configmap_type = schemas.for_kind("v1", "ConfigMap")
    def configmap(label: str, key: str) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {label: "1"}},
                "data": {key: "1"}}

    live = apply_as("a", None, configmap("x", "one"), configmap_type)
    out = apply_as("b", live, configmap("y", "two"), configmap_type, now=T1)
    assert out["metadata"]["labels"] == {"x": "1", "y": "1"}
    assert out["data"] == {"one": "1", "two": "1"}


# --- prune ------------------------------------------------------------------------------------------------


def test_prune_removes_only_fields_the_applier_owned_alone(deployment_type: TypeNode) -> None:
    live = apply_as("alice", None, deployment(metadata={"labels": {"a": "1", "b": "2", "c": "3"}}), deployment_type)
    live = apply_as("bob", live, deployment(metadata={"labels": {"b": "2"}}), deployment_type, now=T1)
    live = update_as("kubectl-label", live, edited(live, lambda o: o["metadata"]["labels"].update(d="4")),
                     deployment_type, now=T2)
    live = apply_as("alice", live, deployment(metadata={"labels": {"a": "1", "b": "2", "c": "3", "d": "4"}}),
                    deployment_type, now=T3)
    out = apply_as("alice", live, deployment(), deployment_type, now=T4)
    assert out["metadata"]["labels"] == {"b": "2", "d": "4"}


def test_prune_keeps_fields_the_applier_never_applied(deployment_type: TypeNode) -> None:
    live = apply_as("alice", None, deployment(replicas=2), deployment_type)
    live["spec"]["revisionHistoryLimit"] = 10
    out = apply_as("alice", live, deployment(), deployment_type, now=T1)
    assert "replicas" not in out["spec"]
    assert out["spec"]["revisionHistoryLimit"] == 10


def test_pruned_list_item_survives_with_parts_other_managers_own(deployment_type: TypeNode) -> None:
    two = [{"name": "nginx", "image": "nginx:1"}, {"name": "sidecar", "image": "envoy:1", "args": ["-v"]}]
    live = apply_as("alice", None, deployment(containers=two), deployment_type)
    live = update_as("ctrl", live, edited(live, lambda o: o["spec"]["template"]["spec"]["containers"][1].update(
        image="envoy:2")), deployment_type)
    out = apply_as("alice", live, deployment(containers=two[:1]), deployment_type, now=T2)
    assert out["spec"]["template"]["spec"]["containers"] == [
        {"name": "nginx", "image": "nginx:1"}, {"name": "sidecar", "image": "envoy:2"}]
    gone = apply_as("alice", apply_as("alice", None, deployment(containers=two), deployment_type),
                    deployment(containers=two[:1]), deployment_type, now=T2)
    assert gone["spec"]["template"]["spec"]["containers"] == [{"name": "nginx", "image": "nginx:1"}]


# --- conflicts --------------------------------------------------------------------------------------------


def test_owning_a_parent_does_not_conflict_with_changes_below_it(deployment_type: TypeNode) -> None:
    live = update_as("kubectl-create", None, deployment(metadata={"labels": {"a": "1"}}), deployment_type, now=T0)
    assert fields(live, "kubectl-create", "Update")["f:metadata"] == {"f:labels": {".": {}, "f:a": {}}}
    out = apply_as("alice", live, deployment(metadata={"labels": {"b": "2"}}), deployment_type, now=T1)
    assert out["metadata"]["labels"] == {"a": "1", "b": "2"}


def test_conflicts_with_several_managers_are_grouped_and_sorted(deployment_type: TypeNode) -> None:
    live = apply_as("zed", None, deployment(replicas=1, minReadySeconds=5), deployment_type)
    live = update_as("kubectl-edit", live, edited(live, lambda o: o["spec"]["template"]["spec"]["containers"][0]
                                                  .update(image="nginx:2")), deployment_type, now=T1)
    live = apply_as("ctrl", live, {**deployment(), "status": {"replicas": 1}}, deployment_type, now=T2,
                    subresource="status", ignored=("spec", "metadata"))
    config = deployment(replicas=3, minReadySeconds=9, containers=[{"name": "nginx", "image": "nginx:3"}])
    config["status"] = {"replicas": 2}
    with pytest.raises(ApplyConflict) as raised:
        apply_as("me", live, config, deployment_type, now=T3)
    assert raised.value.conflicts == (
        ('"ctrl" with subresource "status"', ".status.replicas"),
        ('"kubectl-edit" using apps/v1', '.spec.template.spec.containers[name="nginx"].image'),
        ('"zed"', ".spec.minReadySeconds"),
        ('"zed"', ".spec.replicas"),
    )
    status = raised.value.status()
    assert status["message"] == (
        "Apply failed with 4 conflicts: "
        'conflicts with "ctrl" with subresource "status":\n- .status.replicas\n'
        'conflicts with "kubectl-edit" using apps/v1:\n- .spec.template.spec.containers[name="nginx"].image\n'
        'conflicts with "zed":\n- .spec.minReadySeconds\n- .spec.replicas')
    assert status["details"]["causes"][0] == {"reason": "FieldManagerConflict",
                                              "message": 'conflict with "ctrl" with subresource "status"',
                                              "field": ".status.replicas"}
    assert len(status["details"]["causes"]) == 4


def test_conflict_changes_nothing_and_force_takes_ownership_from_an_updater(deployment_type: TypeNode) -> None:
    live = apply_as("alice", None, deployment(replicas=2), deployment_type)
    live = update_as("kubectl", live, edited(live, lambda o: o["spec"].update(replicas=4)), deployment_type,
                     subresource="scale")
    snapshot = copy.deepcopy(live)
    with pytest.raises(ApplyConflict, match=r'conflict with "kubectl" with subresource "scale" using apps/v1'):
        apply_as("alice", live, deployment(replicas=2), deployment_type, now=T2)
    assert live == snapshot
    forced = apply_as("alice", live, deployment(replicas=2), deployment_type, now=T2, force=True)
    assert forced["spec"]["replicas"] == 2
    assert all(e["manager"] == "alice" for e in entries(forced))


def test_status_subresource_managers_are_distinct_identities(widget_type: TypeNode) -> None:
    live = apply_as("ctrl", None, widget({"size": "s"}), widget_type, ignored=("status",))
    config = {**widget({"size": "ignored"}, labels={"dropped": "yes"}), "status": {"phase": "Ready"}}
    out = apply_as("ctrl", live, config, widget_type, now=T1, subresource="status", ignored=("spec", "metadata"))
    assert out["spec"] == {"size": "s"} and "labels" not in out["metadata"]
    assert out["status"] == {"phase": "Ready"}
    assert [(e["manager"], e.get("subresource"), e["fieldsV1"]) for e in entries(out)] == [
        ("ctrl", None, {"f:spec": {"f:size": {}}}),
        ("ctrl", "status", {"f:status": {"f:phase": {}}}),
    ]
    main = apply_as("ctrl", out, {**widget({"size": "s"}), "status": {"phase": "Lost"}}, widget_type, now=T2,
                    ignored=("status",))
    assert main["status"] == {"phase": "Ready"}
    assert fields(main, "ctrl") == {"f:spec": {"f:size": {}}}


def test_reset_fields_may_be_nested(deployment_type: TypeNode) -> None:
    live = apply_as("alice", None, deployment(replicas=2, metadata={"labels": {"app": "web"}}), deployment_type)
    config = deployment(replicas=9, metadata={"labels": {"app": "other"}, "annotations": {"note": "x"}})
    config["status"] = {"replicas": 2}
    out = apply_as("ctrl", live, config, deployment_type, now=T1, subresource="status",
                   ignored=("spec", "metadata.labels"))
    assert out["spec"]["replicas"] == 2 and out["metadata"]["labels"] == {"app": "web"}
    assert out["metadata"]["annotations"] == {"note": "x"} and out["status"] == {"replicas": 2}
    assert entry(out, "ctrl", subresource="status")["fieldsV1"] == {
        "f:metadata": {"f:annotations": {"f:note": {}}}, "f:status": {"f:replicas": {}}}


# --- managedFields bookkeeping ------------------------------------------------------------------------------


def test_update_that_changes_nothing_leaves_entries_untouched(deployment_type: TypeNode) -> None:
    live = update_as("kubectl-create", None, deployment(replicas=1), deployment_type, now=T0)
    same = update_as("kubectl-edit", live, edited(live, lambda o: None), deployment_type, now=T1)
    assert entries(same) == entries(live)
    only_meta = update_as("kubectl-edit", live, edited(live, lambda o: o["metadata"].update(resourceVersion="9")),
                          deployment_type, now=T1)
    assert entries(only_meta) == entries(live)


def test_removed_fields_leave_every_manager(deployment_type: TypeNode) -> None:
    live = apply_as("alice", None, deployment(replicas=2, metadata={"labels": {"a": "1"}}), deployment_type)
    live = apply_as("bob", live, deployment(metadata={"labels": {"a": "1"}}), deployment_type, now=T1)
    out = update_as("kubectl-edit", live, edited(live, lambda o: o["metadata"].pop("labels")), deployment_type)
    assert "labels" not in out["metadata"]
    for manager in ("alice", "bob"):
        assert "f:metadata" not in fields(out, manager)


def test_managed_fields_order_and_the_ancient_changes_cap(schemas: Schemas) -> None:
    configmap_type = schemas.for_kind("v1", "ConfigMap")
    live = apply_as("applier", None, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                                      "data": {"base": "x"}}, configmap_type, now="2025-01-01T00:00:30Z")
    for i in range(12):
        live = update_as(f"writer-{i:02d}", live, edited(live, lambda o, i=i: o["data"].update({f"k{i}": "v"})),
                         configmap_type, now=f"2025-01-01T00:{i + 10:02d}:00Z")
    managers = [(e["manager"], e["operation"], e.get("time")) for e in entries(live)]
    assert managers[0] == ("applier", "Apply", "2025-01-01T00:00:30Z")
    assert len([m for m in managers if m[1] == "Update"]) == 10
    assert managers[1] == ("ancient-changes", "Update", "2025-01-01T00:12:00Z")
    assert [m[0] for m in managers[2:]] == [f"writer-{i:02d}" for i in range(3, 12)]
    ancient = entry(live, "ancient-changes", "Update")["fieldsV1"]
    assert ancient == {"f:data": {"f:k0": {}, "f:k1": {}, "f:k2": {}}}


def test_client_supplied_managed_fields(schemas: Schemas) -> None:
    configmap_type = schemas.for_kind("v1", "ConfigMap")
    live = apply_as("alice", None, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                                    "data": {"a": "1"}}, configmap_type)
    other = [{"manager": "someone", "operation": "Update", "apiVersion": "v1", "time": T0, "fieldsType": "FieldsV1",
              "fieldsV1": {"f:data": {"f:a": {}}}}]

    def put(managed: Any, subresource: str | None = None, data: str = "2") -> list[str]:
        new = edited(live, lambda o: o["data"].update(b=data))
        if managed is not None:
            new["metadata"]["managedFields"] = managed
        else:
            new["metadata"].pop("managedFields")
        return [e["manager"] for e in entries(update_as("edit", live, new, configmap_type, subresource=subresource))]

    assert put(None) == ["alice", "edit"]
    assert put(other) == ["someone", "edit"]
    assert put([]) == ["edit"]
    assert put([{}]) == ["edit"]
    assert put([{"manager": "x", "operation": "Bogus"}]) == ["alice", "edit"]
    assert put(other, subresource="status") == ["alice", "edit"]
    reset = edited(live, lambda o: o["metadata"].update(managedFields=[{}]))
    assert "managedFields" not in update_as("edit", live, reset, configmap_type)["metadata"]


def test_apply_time_moves_only_when_the_object_changes(deployment_type: TypeNode) -> None:
    live = apply_as("alice", None, deployment(replicas=2), deployment_type, now=T0)
    again = apply_as("alice", live, deployment(replicas=2), deployment_type, now=T1)
    assert again == live
    assert same_but_managed_times(again, live)
    changed = apply_as("alice", live, deployment(replicas=3), deployment_type, now=T2)
    assert entry(changed, "alice")["time"] == T2
    assert not same_but_managed_times(changed, live)
    retimed = edited(live, lambda o: o["metadata"]["managedFields"][0].update(time=T2))
    assert retimed != live and same_but_managed_times(retimed, live)
    refielded = edited(live, lambda o: o["metadata"]["managedFields"][0].update(manager="bob"))
    assert not same_but_managed_times(refielded, live)
    assert "time" in changed["metadata"]["managedFields"][0]


def test_apply_keeps_server_owned_metadata_and_never_mutates_inputs(deployment_type: TypeNode) -> None:
    live = apply_as("alice", None, deployment(replicas=2), deployment_type)
    live["metadata"].update(uid="u-1", resourceVersion="5", generation=1, creationTimestamp=T0)
    config = deployment(replicas=3, metadata={"creationTimestamp": None, "uid": "other"})
    live_copy, config_copy = copy.deepcopy(live), copy.deepcopy(config)
    out = apply_as("alice", live, config, deployment_type, now=T1)
    assert live == live_copy and config == config_copy
    assert {k: out["metadata"][k] for k in ("uid", "resourceVersion", "generation", "creationTimestamp")} == {
        "uid": "u-1", "resourceVersion": "5", "generation": 1, "creationTimestamp": T0}


# --- schemas ----------------------------------------------------------------------------------------------


def test_builtin_topology_comes_from_the_schema(schemas: Schemas, deployment_type: TypeNode) -> None:
    pod = deployment_type.field("spec").field("template").field("spec")
    containers = pod.field("containers")
    assert (containers.list_type, containers.map_keys, containers.patch_merge_key) == ("map", ("name",), "name")
    ports = containers.elem.field("ports") if containers.elem else None
    assert ports is not None and ports.map_keys == ("containerPort", "protocol")
    assert dict(ports.key_defaults) == {"protocol": "TCP"}
    assert pod.field("tolerations").list_type == "atomic"
    assert pod.field("nodeSelector").atomic and pod.field("nodeSelector").kind == "map"
    assert pod.field("volumes").patch_strategy == "merge,retainKeys"
    assert deployment_type.field("spec").field("selector").atomic
    assert deployment_type.field("spec").field("strategy").patch_strategy == "retainKeys"
    meta = deployment_type.field("metadata")
    assert meta.field("finalizers").list_type == "set"
    assert meta.field("ownerReferences").map_keys == ("uid",)
    assert meta.field("labels").kind == "map" and not meta.field("labels").atomic
    assert deployment_type.field("nonsense").kind == "any"
    assert schemas.definition_name("apps/v1", "Deployment") == "io.k8s.api.apps.v1.Deployment"
    assert schemas.definition_name("v1", "ConfigMap") == "io.k8s.api.core.v1.ConfigMap"
    assert schemas.definition_name("example.com/v1", "Widget") is None
    assert "io.k8s.api.core.v1.Pod" in schemas.definitions()
    assert schemas.for_kind("example.com/v9", "Unknown").kind == "any"


def test_crd_topology_and_registration() -> None:
    registry = Schemas.builtin()
    registry.register_crd("example.com", "v1", "Widget", WIDGET_SCHEMA)
    widget_type = registry.for_kind("example.com/v1", "Widget")
    spec = widget_type.field("spec")
    assert spec.field("tags").list_type == "atomic"
    assert (spec.field("ports").list_type, spec.field("ports").map_keys) == ("map", ("name",))
    assert dict(spec.field("ports").key_defaults) == {}
    assert dict(spec.field("endpoints").key_defaults) == {"protocol": "TCP"}
    applied = apply_as("alice", None, widget({"endpoints": [{"host": "a"}]}), widget_type)
    assert fields(applied, "alice") == {"f:spec": {"f:endpoints": {'k:{"host":"a","protocol":"TCP"}': {
        ".": {}, "f:host": {}}}}}
    assert spec.field("selector").atomic and spec.field("settings").kind == "map"
    assert spec.field("extra").kind == "any"
    meta = widget_type.field("metadata")
    assert meta.field("ownerReferences").map_keys == ("uid",) and meta.field("finalizers").list_type == "set"
    registry.unregister_crd("example.com", "Widget")
    assert registry.for_kind("example.com/v1", "Widget").kind == "any"
    assert Schemas.builtin().for_kind("example.com/v1", "Widget").kind == "any"
