"""Discovery: /version, /api, /apis, group and resource lists, as the official client reads them."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from kubernetes.dynamic import DynamicClient

from .helpers import Response


def test_version_reports_kubernetes_1_37(api_client: client.ApiClient) -> None:
    info = client.VersionApi(api_client).get_code()
    assert (info.major, info.minor, info.git_version) == ("1", "37", "v1.37.2")


def test_core_api_versions_lists_v1_and_the_server_address(api_client: client.ApiClient) -> None:
    versions = client.CoreApi(api_client).get_api_versions()
    assert versions.versions == ["v1"]
    address = versions.server_address_by_client_cidrs[0]
    assert address.client_cidr == "0.0.0.0/0" and address.server_address.rpartition(":")[2].isdigit()


def test_api_groups_prefer_their_only_version(api_client: client.ApiClient) -> None:
    groups = {g.name: g for g in client.ApisApi(api_client).get_api_versions().groups}
    assert {"apps", "batch", "coordination.k8s.io", "rbac.authorization.k8s.io", "policy",
            "apiextensions.k8s.io", "events.k8s.io"} <= set(groups)
    apps = groups["apps"]
    assert apps.preferred_version.to_dict() == apps.versions[0].to_dict() == {"group_version": "apps/v1",
                                                                              "version": "v1"}


def test_apps_resource_list_has_subresources_short_names_and_categories(api_client: client.ApiClient) -> None:
    resources = {r.name: r for r in client.AppsV1Api(api_client).get_api_resources().resources}
    deployments = resources["deployments"]
    assert deployments.kind == "Deployment" and deployments.namespaced
    assert deployments.short_names == ["deploy"] and deployments.categories == ["all"]
    assert set(deployments.verbs) == {"create", "delete", "deletecollection", "get", "list", "patch", "update",
                                      "watch"}
    assert resources["deployments/status"].verbs == ["get", "patch", "update"]
    scale = resources["deployments/scale"]
    assert (scale.group, scale.version, scale.kind) == ("autoscaling", "v1", "Scale")


def test_core_resources_include_the_served_kinds(api_client: client.ApiClient) -> None:
    resources = {r.name: r for r in client.CoreV1Api(api_client).get_api_resources().resources}
    for name in ("namespaces", "pods", "services", "configmaps", "secrets", "serviceaccounts", "events",
                 "persistentvolumeclaims", "persistentvolumes", "nodes", "endpoints"):
        assert name in resources, name
    assert not resources["namespaces"].namespaced and resources["pods"].namespaced
    assert "namespaces/finalize" in resources


def test_dynamic_client_resolves_kinds_by_group_version(dynamic_client: DynamicClient) -> None:
    leases = dynamic_client.resources.get(api_version="coordination.k8s.io/v1", kind="Lease")
    assert leases.name == "leases" and leases.namespaced


def test_an_unknown_group_is_not_found(http: Any) -> None:
    response: Response = http("GET", "/apis/nope.example.com/v1")
    assert (response.status, response.body) == (404, b"404 page not found\n")


def test_the_system_namespaces_exist_and_are_active(api_client: client.ApiClient) -> None:
    namespaces = {ns.metadata.name: ns for ns in client.CoreV1Api(api_client).list_namespace().items}
    for name in ("default", "kube-system", "kube-public", "kube-node-lease"):
        assert namespaces[name].status.phase == "Active"


def test_discovery_answers_plain_json_when_asked_for_it(http: Any) -> None:
    response = http("GET", "/apis", headers={"Accept": "application/json"})
    assert response.status == 200 and response.headers["Content-Type"] == "application/json"
    assert response.body["kind"] == "APIGroupList"


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/livez"])
def test_health_endpoints_answer_ok(http: Any, path: str) -> None:
    assert http("GET", path).body == b"ok"


def test_a_resource_of_an_unknown_version_is_not_found(dynamic_client: DynamicClient) -> None:
    with pytest.raises(ApiException) as err:
        dynamic_client.request("GET", "/apis/apps/v2/deployments")
    assert err.value.status == 404
