"""Robustness: unknown paths, malformed bodies and unsupported verbs answer the real server's 4xx Status, never a
500 or a dropped connection."""

from __future__ import annotations

from typing import Any

import pytest

from engine.devcluster.cluster import DevCluster

from .helpers import configmap, connection

FAILURE = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}


def assert_status(body: dict[str, Any], code: int, reason: str) -> None:
    assert {k: body[k] for k in FAILURE} == FAILURE
    assert body["code"] == code and body.get("reason", "") == reason


@pytest.mark.parametrize("path", ["/api/v1/nothings", "/apis/apps/v1/namespaces/x/widgets",
                                  "/api/v1/namespaces/default/configmaps/a/nosuchsub", "/api/v9"])
def test_unknown_paths_are_not_found(http: Any, path: str) -> None:
    response = http("GET", path)
    assert response.status == 404
    assert_status(response.body, 404, "NotFound")
    assert response.body["message"] == "the server could not find the requested resource"


@pytest.mark.parametrize("path", ["/nope", "/apis/nope.example.com", "/apis/nope.example.com/v1/widgets"])
def test_paths_no_api_group_serves_get_the_plain_text_404(http: Any, path: str) -> None:
    response = http("GET", path)
    assert (response.status, response.body) == (404, b"404 page not found\n")
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"


def test_bad_json_is_a_bad_request(http: Any, namespace: str) -> None:
    response = http("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=b"{not json")
    assert response.status == 400
    assert_status(response.body, 400, "BadRequest")


def test_a_json_array_body_is_a_bad_request(http: Any, namespace: str) -> None:
    assert http("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=[1, 2]).status == 400


def test_bad_yaml_in_an_apply_is_a_bad_request(http: Any, namespace: str) -> None:
    response = http("PATCH", f"/api/v1/namespaces/{namespace}/configmaps/a", body=b"a: [unclosed",
                    content_type="application/apply-patch+yaml", query={"fieldManager": "m"})
    assert response.status == 400 and response.body["message"].startswith("error encoding patch: yaml: line 1: ")


def test_a_body_of_another_kind_is_a_bad_request(http: Any, namespace: str) -> None:
    body = {**configmap("a"), "kind": "Secret"}
    response = http("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=body)
    assert response.status == 400


def test_a_body_of_another_version_is_a_bad_request(http: Any, namespace: str) -> None:
    body = {**configmap("a"), "apiVersion": "v2"}
    response = http("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=body)
    assert response.status == 400
    assert response.body["message"] == ('ConfigMap in version "v2" cannot be handled as a ConfigMap: no kind '
                                        '"ConfigMap" is registered for version "v2" in scheme '
                                        '"pkg/runtime/scheme.go:111"')


def test_an_empty_body_is_a_bad_request(http: Any, namespace: str) -> None:
    assert http("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=b"").status == 400


def test_post_to_an_object_is_not_allowed(http: Any, namespace: str) -> None:
    response = http("POST", f"/api/v1/namespaces/{namespace}/configmaps/a", body=configmap("a"))
    assert response.status == 405
    assert_status(response.body, 405, "MethodNotAllowed")


def test_a_protobuf_body_is_an_unsupported_media_type(http: Any, namespace: str) -> None:
    response = http("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=b"k8s\x00\n\x02",
                    content_type="application/vnd.kubernetes.protobuf")
    assert response.status == 415
    assert_status(response.body, 415, "UnsupportedMediaType")


def test_bad_label_values_are_invalid(http: Any, namespace: str) -> None:
    response = http("POST", f"/api/v1/namespaces/{namespace}/configmaps",
                    body=configmap("a", labels={"app": "no spaces allowed"}))
    assert response.status == 422
    assert response.body["details"]["causes"][0]["field"] == "metadata.labels"


def test_a_wrongly_typed_metadata_field_is_a_bad_request(http: Any, namespace: str) -> None:
    body = configmap("a")
    body["metadata"]["labels"] = ["not", "a", "map"]
    assert http("POST", f"/api/v1/namespaces/{namespace}/configmaps", body=body).status == 400


def test_a_bad_watch_resource_version_is_an_internal_error(http: Any, namespace: str) -> None:
    response = http("GET", f"/api/v1/namespaces/{namespace}/configmaps",
                    query={"watch": "true", "resourceVersion": "abc"})
    assert response.status == 500 and "reason" not in response.body
    assert response.body["message"] == ('resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": '
                                        "invalid syntax")


def test_garbage_http_does_not_kill_the_server(devcluster: DevCluster, http: Any) -> None:
    conn = connection(devcluster, timeout=5)
    conn.connect()
    assert conn.sock is not None
    with conn.sock as sock:  # TLS on the real backend, plain TCP on the dev one
        sock.sendall(b"BOGUS / HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = sock.recv(1024)
    assert answer.startswith(b"HTTP/1.")
    assert http("GET", "/version").status == 200


def test_keep_alive_serves_many_requests_on_one_connection(devcluster: DevCluster) -> None:
    conn = connection(devcluster, timeout=5)
    try:
        for _ in range(20):
            conn.request("GET", "/api/v1/namespaces/default")
            resp = conn.getresponse()
            resp.read()
            assert resp.status == 200 and resp.getheader("Content-Type") == "application/json"
    finally:
        conn.close()
