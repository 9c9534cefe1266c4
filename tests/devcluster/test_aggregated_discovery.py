"""Aggregated discovery (apidiscovery.k8s.io/v2): /api and /apis as one APIGroupDiscoveryList, as kubectl and
client-go ask for it, with its fallbacks, the 406 for what cannot be served, ETags, and CRDs once established."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from engine.apiserver import protobuf
from engine.devcluster.backends import Cluster

from .helpers import Response, wait_for

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
CLIENT_GO = f"{AGGREGATED},application/json"  # what kubectl and client-go send
V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
SUB_VERBS = ["get", "patch", "update"]
NOT_ACCEPTABLE = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                  "message": "only the following media types are accepted: application/json, application/yaml, "
                             "application/vnd.kubernetes.protobuf", "reason": "NotAcceptable", "code": 406}


def kind(name: str, group: str = "", version: str = "") -> dict[str, str]:
    return {"group": group, "version": version, "kind": name}


def resources(body: dict[str, Any], group: str, version: str = "v1") -> dict[str, dict[str, Any]]:
    item = next(i for i in body["items"] if i["metadata"].get("name", "") == group)
    found = next(v for v in item["versions"] if v["version"] == version)
    assert found["freshness"] == "Current"
    return {r["resource"]: r for r in found["resources"]}


def test_apis_answers_the_aggregated_list_to_client_go(http: Any) -> None:
    response: Response = http("GET", "/apis", headers={"Accept": CLIENT_GO})
    assert response.status == 200 and response.headers["Content-Type"] == AGGREGATED
    assert (response.headers["Cache-Control"], response.headers["Vary"]) == ("public", "Accept")
    body = response.body
    assert (body["kind"], body["apiVersion"], body["metadata"]) == ("APIGroupDiscoveryList",
                                                                     "apidiscovery.k8s.io/v2", {})
    plain = http("GET", "/apis", headers={"Accept": "application/json"}).body
    assert [i["metadata"]["name"] for i in body["items"]] == [g["name"] for g in plain["groups"]]
    assert resources(body, "apps")["deployments"] == {
        "resource": "deployments", "responseKind": kind("Deployment"), "scope": "Namespaced",
        "singularResource": "deployment", "verbs": ALL_VERBS, "shortNames": ["deploy"], "categories": ["all"],
        "subresources": [{"subresource": "scale", "responseKind": kind("Scale", "autoscaling", "v1"),
                          "verbs": SUB_VERBS},
                         {"subresource": "status", "responseKind": kind("Deployment"), "verbs": SUB_VERBS}]}
    crds = resources(body, "apiextensions.k8s.io")["customresourcedefinitions"]
    assert (crds["scope"], crds["shortNames"], crds["categories"]) == ("Cluster", ["crd", "crds"], ["api-extensions"])
    assert resources(body, "coordination.k8s.io")["leases"] == {
        "resource": "leases", "responseKind": kind("Lease"), "scope": "Namespaced", "singularResource": "lease",
        "verbs": ALL_VERBS}


def test_api_answers_the_core_group_without_a_name(http: Any) -> None:
    body = http("GET", "/api", headers={"Accept": CLIENT_GO}).body
    assert [(i["metadata"], [v["version"] for v in i["versions"]]) for i in body["items"]] == [({}, ["v1"])]
    core = resources(body, "")
    namespaces = core["namespaces"]
    assert (namespaces["scope"], namespaces["verbs"]) == ("Cluster", [v for v in ALL_VERBS if v != "deletecollection"])
    assert namespaces["subresources"] == [
        {"subresource": "finalize", "responseKind": kind("Namespace"), "verbs": ["update"]},
        {"subresource": "status", "responseKind": kind("Namespace"), "verbs": SUB_VERBS}]
    pods = core["pods"]
    assert (pods["shortNames"], pods["categories"], pods["singularResource"]) == (["po"], ["all"], "pod")
    assert {"subresource": "log", "responseKind": kind("Pod"), "verbs": ["get"]} in pods["subresources"]
    assert core["endpoints"]["singularResource"] == "endpoints"
    assert "categories" not in core["configmaps"] and "subresources" not in core["configmaps"]


@pytest.mark.parametrize("media", ["application/yaml", "application/vnd.kubernetes.protobuf"])
def test_the_aggregated_list_comes_in_yaml_and_protobuf(http: Any, media: str) -> None:
    accept = f"{media};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
    response: Response = http("GET", "/apis", headers={"Accept": accept})
    assert response.status == 200
    assert response.headers["Content-Type"] == f"{media};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    decoded = yaml.safe_load(response.raw) if media.endswith("yaml") else protobuf.decode_envelope(response.raw)
    assert decoded == http("GET", "/apis", headers={"Accept": AGGREGATED}).body


def test_v2beta1_is_not_served_and_the_fallback_answers(http: Any) -> None:
    refused: Response = http("GET", "/apis", headers={"Accept": V2BETA1})
    assert (refused.status, refused.body) == (406, NOT_ACCEPTABLE)
    fallback = http("GET", "/apis", headers={"Accept": f"{V2BETA1},application/json"})
    assert fallback.status == 200 and fallback.headers["Content-Type"] == "application/json"
    assert fallback.body["kind"] == "APIGroupList"


def test_any_aggregated_entry_wins_over_the_plain_ones(http: Any) -> None:
    accept = f"application/json;q=0.9,{AGGREGATED};q=0.5"
    assert http("GET", "/api", headers={"Accept": accept}).body["kind"] == "APIGroupDiscoveryList"


@pytest.mark.parametrize("path", ["/apis/apps", "/apis/apps/v1", "/api/v1"])
def test_other_discovery_documents_are_plain_only(http: Any, path: str) -> None:
    refused: Response = http("GET", path, headers={"Accept": AGGREGATED})
    assert (refused.status, refused.body) == (406, NOT_ACCEPTABLE)
    plain = http("GET", path, headers={"Accept": CLIENT_GO})
    assert plain.status == 200 and plain.body["kind"] in ("APIGroup", "APIResourceList")


def test_text_is_not_acceptable(http: Any) -> None:
    refused: Response = http("GET", "/apis", headers={"Accept": "text/plain"})
    assert (refused.status, refused.body) == (406, NOT_ACCEPTABLE)


def test_an_unchanged_list_is_not_modified_for_its_etag(http: Any) -> None:
    first: Response = http("GET", "/apis", headers={"Accept": AGGREGATED})
    etag = first.headers["ETag"]
    assert etag.startswith('"') and etag.endswith('"')
    again: Response = http("GET", "/apis", headers={"Accept": AGGREGATED, "If-None-Match": etag})
    assert (again.status, again.raw, again.headers["ETag"]) == (304, b"", etag)
    assert "Content-Type" not in again.headers  # an HTTP cache keeps the cached answer's type


def test_a_custom_resource_appears_once_established(devcluster: Cluster, http: Any, widget_group: str) -> None:
    def listed() -> dict[str, Any] | None:
        body = http("GET", "/apis", headers={"Accept": CLIENT_GO}).body
        return body if widget_group in {i["metadata"]["name"] for i in body["items"]} else None

    widgets = resources(wait_for(devcluster, listed), widget_group)["widgets"]
    own = kind("Widget", widget_group, "v1")
    assert widgets == {
        "resource": "widgets", "responseKind": own, "scope": "Namespaced", "singularResource": "widget",
        "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
        "shortNames": ["wd"], "subresources": [{"subresource": "status", "responseKind": own, "verbs": SUB_VERBS},
                         {"subresource": "scale", "responseKind": kind("Scale", "autoscaling", "v1"),
                          "verbs": SUB_VERBS}]}
