"""Custom resources written again after their schema changed, or through another version's schema: the parts a
write repeats from the stored object are pruned, defaulted and validated by the schema that checks this write."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from engine.devcluster.backends import Cluster

from .helpers import CRDS, create_crd, http_call, wait_for, widget_crd


@pytest.fixture
def group(devcluster: Cluster) -> Iterator[str]:
    name = f"g{uuid.uuid4().hex[:8]}.example.com"
    yield name
    devcluster.request("DELETE", f"{CRDS}/widgets.{name}")


def widgets(group: str, namespace: str, version: str = "v1") -> str:
    return f"/apis/{group}/{version}/namespaces/{namespace}/widgets"


def change_schema(cluster: Cluster, group: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Replace the CRD with one whose (every version's) schema `change` edited."""
    code, crd = cluster.request("GET", f"{CRDS}/widgets.{group}")
    assert code == 200, crd
    for version in crd["spec"]["versions"]:
        change(version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"])
    code, answer = cluster.request("PUT", f"{CRDS}/widgets.{group}", body=crd)
    assert code == 200, answer


def dry_run_spec(cluster: Cluster, group: str, namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    body = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "probe"}, "spec": spec}
    code, answer = cluster.request("POST", widgets(group, namespace), body=body, query={"dryRun": "All"})
    assert code == 201, answer
    return dict(answer["spec"])


def put_again(cluster: Cluster, path: str, sent: dict[str, Any]) -> Any:
    """PUT `sent` (what was created) again, at the object's current resourceVersion."""
    code, live = cluster.request("GET", path)
    assert code == 200, live
    body = copy.deepcopy(sent)
    body["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"]
    return http_call(cluster, "PUT", path, body=body)


def test_a_field_the_schema_no_longer_declares_is_pruned_from_a_write_repeating_it(
        devcluster: Cluster, group: str, namespace: str) -> None:
    create_crd(devcluster, widget_crd(group))
    sent = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w1"},
            "spec": {"size": 3, "ports": [{"name": "http", "port": 8080}]}}
    code, created = devcluster.request("POST", widgets(group, namespace), body=sent)
    assert code == 201 and created["spec"]["ports"] == [{"name": "http", "port": 8080}]
    change_schema(devcluster, group, lambda spec: spec["ports"]["items"]["properties"].pop("port"))
    wait_for(devcluster, lambda: "port" not in dry_run_spec(devcluster, group, namespace, sent["spec"])["ports"][0])
    answer = put_again(devcluster, f"{widgets(group, namespace)}/w1", sent)
    assert answer.status == 200, answer.body
    assert answer.body["spec"]["ports"] == [{"name": "http"}]
    assert answer.headers.get_all("Warning") == ['299 - "unknown field \\"spec.ports[0].port\\""']


def test_a_default_the_schema_gained_fills_a_write_repeating_the_object(
        devcluster: Cluster, group: str, namespace: str) -> None:
    create_crd(devcluster, widget_crd(group))
    sent = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w1"},
            "spec": {"size": 3, "ports": [{"name": "http"}]}}
    code, created = devcluster.request("POST", widgets(group, namespace), body=sent)
    assert code == 201 and created["spec"]["ports"] == [{"name": "http"}]

    def port_default(spec: dict[str, Any]) -> None:
        spec["ports"]["items"]["properties"]["port"]["default"] = 80

    change_schema(devcluster, group, port_default)
    wait_for(devcluster, lambda: dry_run_spec(devcluster, group, namespace, sent["spec"])["ports"][0].get("port"))
    answer = put_again(devcluster, f"{widgets(group, namespace)}/w1", sent)
    assert answer.status == 200, answer.body
    assert answer.body["spec"]["ports"] == [{"name": "http", "port": 80}]


@pytest.mark.dev_only("it guards the dev API server's shortcut for unchanged parts; kube-apiserver, which has none, "
                     "served v1beta1 with v1's schema for a while after the CRD changed in 2 of 3 full runs, and no "
                     "probe of that moment was found to wait on")
def test_a_write_through_another_version_is_checked_by_that_versions_schema(
        devcluster: Cluster, group: str, namespace: str) -> None:
    crd = widget_crd(group)
    older = copy.deepcopy(crd["spec"]["versions"][0])
    older.update(name="v1beta1", storage=False)
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["ports"]["items"][
        "properties"]["protocol"] = {"type": "string"}
    crd["spec"]["versions"].append(older)
    create_crd(devcluster, crd)
    wait_for(devcluster, lambda: devcluster.request("GET", widgets(group, namespace, "v1beta1"))[0] == 200)
    sent = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w1"},
            "spec": {"size": 3, "ports": [{"name": "http", "protocol": "TCP"}]}}
    code, created = devcluster.request("POST", widgets(group, namespace), body=sent)
    assert code == 201 and created["spec"]["ports"] == [{"name": "http", "protocol": "TCP"}]
    again = {**sent, "apiVersion": f"{group}/v1beta1"}
    answer = put_again(devcluster, f"{widgets(group, namespace, 'v1beta1')}/w1", again)
    assert answer.status == 200, answer.body
    assert answer.body["spec"]["ports"] == [{"name": "http"}]
    assert answer.headers.get_all("Warning") == ['299 - "unknown field \\"spec.ports[0].protocol\\""']


def test_an_unchanged_status_write_keeps_what_the_schema_checked(devcluster: Cluster, group: str,
                                                                 namespace: str) -> None:
    """The common case the shortcut serves: status written again and again, most of it repeated."""
    create_crd(devcluster, widget_crd(group))
    path = f"{widgets(group, namespace)}/w1"
    sent = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 3}}
    assert devcluster.request("POST", widgets(group, namespace), body=sent)[0] == 201
    conditions = [{"type": f"C{i}", "status": "True"} for i in range(5)]
    for phase in ("One", "Two", "Three"):
        code, live = devcluster.request("GET", path)
        live["status"] = {"phase": phase, "conditions": conditions, "bogus": 1}
        code, written = devcluster.request("PUT", f"{path}/status", body=live)
        assert code == 200, written
        assert written["status"] == {"phase": phase, "conditions": conditions}
    code, live = devcluster.request("GET", path)
    live["status"]["conditions"] = [*conditions, {"type": "C5", "status": "True", "extra": "x"}, {"status": "No"}]
    answer = http_call(devcluster, "PUT", f"{path}/status", body=live)
    assert answer.status == 422, answer.body
    assert [c["field"] for c in answer.body["details"]["causes"]] == ["status.conditions[6].type"]
