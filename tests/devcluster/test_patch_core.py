"""The non-apply PATCH types without HTTP: JSON merge patch, JSON patch and strategic merge patch."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from engine.apiserver.patch import PatchError, PatchTooLarge, json_patch, merge_patch, strategic_merge_patch
from engine.apiserver.schema import Schemas, TypeNode


@pytest.fixture(scope="module")
def deployment_type() -> TypeNode:
    return Schemas.builtin().for_kind("apps/v1", "Deployment")


def deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web", "tier": "fe"}, "finalizers": ["a/x", "b/y"]},
        "spec": {
            "replicas": 2,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {"spec": {
                "containers": [
                    {"name": "nginx", "image": "nginx:1", "command": ["nginx", "-g"],
                     "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
                    {"name": "sidecar", "image": "envoy:1"},
                ],
                "tolerations": [{"key": "k1", "operator": "Exists"}],
            }},
        },
    }


def containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["spec"]["template"]["spec"]["containers"]  # type: ignore[no-any-return]


def pod_patch(**pod_spec: Any) -> dict[str, Any]:
    return {"spec": {"template": {"spec": pod_spec}}}


# --- merge patch ------------------------------------------------------------------------------------------


def test_merge_patch_merges_objects_deletes_nulls_and_replaces_lists() -> None:
    live = deployment()
    out = merge_patch(live, {"metadata": {"labels": {"tier": None, "team": "x"}},
                             "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "only"}]}}}})
    assert out["metadata"]["labels"] == {"app": "web", "team": "x"}
    assert out["spec"]["replicas"] == 3
    assert containers(out) == [{"name": "only"}]
    assert out["spec"]["template"]["spec"]["tolerations"] == [{"key": "k1", "operator": "Exists"}]
    assert live == deployment()


def test_merge_patch_must_be_an_object() -> None:
    with pytest.raises(PatchError, match="Invalid JSON Patch"):
        merge_patch(deployment(), [{"op": "add"}])


# --- JSON patch -------------------------------------------------------------------------------------------


def test_json_patch_applies_operations_in_order() -> None:
    live = deployment()
    out = json_patch(live, [
        {"op": "test", "path": "/spec/replicas", "value": 2},
        {"op": "replace", "path": "/spec/replicas", "value": 5},
        {"op": "add", "path": "/metadata/labels/team", "value": "x"},
        {"op": "remove", "path": "/spec/template/spec/containers/1"},
    ])
    assert out["spec"]["replicas"] == 5
    assert out["metadata"]["labels"]["team"] == "x"
    assert [c["name"] for c in containers(out)] == ["nginx"]
    assert live == deployment()


@pytest.mark.parametrize("ops", [
    [{"op": "test", "path": "/spec/replicas", "value": 9}],
    [{"op": "remove", "path": "/spec/nothing"}],
    [{"op": "replace", "path": "/metadata/missing", "value": 1}],
    [{"op": "add", "path": "/spec/no/such/parent", "value": 1}],
    [{"op": "frobnicate", "path": "/spec"}],
    [{"path": "/spec"}],
    ["not an operation"],
    {"op": "add", "path": "/x", "value": 1},
    [{"op": "replace", "path": "", "value": [1]}],
])
def test_json_patch_errors(ops: Any) -> None:
    live = deployment()
    with pytest.raises(PatchError):
        json_patch(live, ops)
    assert live == deployment()


def test_json_patch_with_too_many_operations() -> None:
    ops = [{"op": "test", "path": "/kind", "value": "Deployment"}] * 10001
    with pytest.raises(PatchTooLarge, match="The allowed maximum operations in a JSON patch is 10000, got: 10001"):
        json_patch(deployment(), ops)
    assert json_patch(deployment(), ops[:10000]) == deployment()


# --- strategic merge patch --------------------------------------------------------------------------------


def test_strategic_merge_merges_containers_and_env_by_name(deployment_type: TypeNode) -> None:
    """Patch items keep the patch's order; live-only items are slotted in by their live position."""
    live = deployment()
    patch = pod_patch(containers=[{"name": "nginx", "image": "nginx:2", "env": [{"name": "B", "value": "3"},
                                                                               {"name": "C", "value": "4"}]},
                                  {"name": "new", "image": "busybox"}])
    out = strategic_merge_patch(live, patch, deployment_type)
    assert containers(out) == [
        {"name": "nginx", "image": "nginx:2", "command": ["nginx", "-g"],
         "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}, {"name": "C", "value": "4"}]},
        {"name": "new", "image": "busybox"},
        {"name": "sidecar", "image": "envoy:1"},
    ]
    prepended = strategic_merge_patch(live, pod_patch(containers=[{"name": "first"}]), deployment_type)
    assert [c["name"] for c in containers(prepended)] == ["first", "nginx", "sidecar"]
    assert live == deployment()


def test_strategic_merge_replaces_lists_without_merge_strategy(deployment_type: TypeNode) -> None:
    out = strategic_merge_patch(deployment(), pod_patch(
        tolerations=[{"key": "k2", "operator": "Exists"}],
        containers=[{"name": "nginx", "command": ["httpd"]}]), deployment_type)
    assert out["spec"]["template"]["spec"]["tolerations"] == [{"key": "k2", "operator": "Exists"}]
    assert containers(out)[0]["command"] == ["httpd"]


def test_strategic_merge_maps_merge_and_null_deletes(deployment_type: TypeNode) -> None:
    out = strategic_merge_patch(deployment(), {"metadata": {"labels": {"tier": None, "team": "x"}},
                                               "spec": {"replicas": None}}, deployment_type)
    assert out["metadata"]["labels"] == {"app": "web", "team": "x"}
    assert "replicas" not in out["spec"]


def test_strategic_merge_patch_delete_and_replace_directives(deployment_type: TypeNode) -> None:
    deleted = strategic_merge_patch(deployment(), pod_patch(containers=[{"name": "sidecar", "$patch": "delete"}]),
                                    deployment_type)
    assert [c["name"] for c in containers(deleted)] == ["nginx"]
    replaced = strategic_merge_patch(deployment(), pod_patch(containers=[{"$patch": "replace"},
                                                                         {"name": "solo", "image": "x"}]),
                                     deployment_type)
    assert containers(replaced) == [{"name": "solo", "image": "x"}]
    wiped = strategic_merge_patch(deployment(), {"metadata": {"labels": {"$patch": "replace", "only": "me"}}},
                                  deployment_type)
    assert wiped["metadata"]["labels"] == {"only": "me"}
    emptied = strategic_merge_patch(deployment(), {"spec": {"strategy": {"$patch": "delete"}}}, deployment_type)
    assert emptied["spec"]["strategy"] == {}
    merged = strategic_merge_patch(deployment(), {"metadata": {"labels": {"$patch": "merge", "x": "1"}}},
                                   deployment_type)
    assert merged["metadata"]["labels"] == {"app": "web", "tier": "fe", "x": "1"}


@pytest.mark.parametrize("patch", [
    pod_patch(containers=[{"$patch": "delete", "image": "no-key"}]),
    pod_patch(containers=[{"$patch": "bogus", "name": "nginx"}]),
    pod_patch(containers=[{"image": "no-key"}]),
    {"metadata": {"labels": {"$patch": "bogus"}}},
    {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 2}}}},
])
def test_strategic_merge_rejects_bad_directives(deployment_type: TypeNode, patch: dict[str, Any]) -> None:
    with pytest.raises(PatchError):
        strategic_merge_patch(deployment(), patch, deployment_type)


def test_strategic_merge_retain_keys_clears_other_fields(deployment_type: TypeNode) -> None:
    out = strategic_merge_patch(deployment(), {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
                                deployment_type)
    assert out["spec"]["strategy"] == {"type": "Recreate"}


def test_strategic_merge_set_element_order(deployment_type: TypeNode) -> None:
    live = deployment()
    containers(live).append({"name": "third", "image": "t"})
    patch = pod_patch(**{"$setElementOrder/containers": [{"name": "sidecar"}, {"name": "nginx"}],
                         "containers": [{"name": "nginx", "image": "nginx:2"}]})
    out = strategic_merge_patch(live, patch, deployment_type)
    assert [c["name"] for c in containers(out)] == ["sidecar", "nginx", "third"]
    assert containers(out)[1]["image"] == "nginx:2"


def test_strategic_merge_primitive_lists(deployment_type: TypeNode) -> None:
    added = strategic_merge_patch(deployment(), {"metadata": {"finalizers": ["c/z", "a/x"]}}, deployment_type)
    assert added["metadata"]["finalizers"] == ["c/z", "a/x", "b/y"]
    removed = strategic_merge_patch(deployment(), {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a/x"]}},
                                    deployment_type)
    assert removed["metadata"]["finalizers"] == ["b/y"]


def test_strategic_merge_keeps_inputs_and_takes_new_values_without_directives(deployment_type: TypeNode) -> None:
    live, patch = deployment(), pod_patch(volumes=[{"name": "data", "emptyDir": {"medium": None}}])
    patch_copy = copy.deepcopy(patch)
    out = strategic_merge_patch(live, patch, deployment_type)
    assert out["spec"]["template"]["spec"]["volumes"] == [{"name": "data", "emptyDir": {}}]
    assert live == deployment() and patch == patch_copy
