"""The wire: requests sent through the client's pool reach the server as the client's own request path sends them —
queries quoted alike, bodies that hold nulls and text beyond ASCII, errors that carry the server's Status."""

from __future__ import annotations

import datetime

import pytest

from engine.errors import PermanentError
from engine.kube import Kube
from engine.kube.codec import decode, encode
from engine.kube.sdk import ApiClient, Configuration
from engine.kube.wire import plain_json, query_string

from .helpers import configmap


@pytest.mark.parametrize("query", [
    {"labelSelector": "app in (web, api),tier!=cache"},
    {"fieldSelector": "metadata.name=a/b", "limit": "500", "continue": "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ=="},
    {"fieldManager": "kplan émigré", "dryRun": "All"},
])
def test_a_query_is_quoted_as_the_clients_api_client_quotes_it(query: dict[str, str]) -> None:
    client = ApiClient(Configuration())
    assert query_string(query) == "?" + client.parameters_to_url_query(list(query.items()), None)


def test_no_query_adds_nothing_to_the_path() -> None:
    assert query_string({}) == query_string(None) == ""


def test_a_body_encodes_to_the_json_the_standard_library_reads_back() -> None:
    body = {"data": {"greeting": "grüß dich", "gone": None}, "spec": {"replicas": 2, "ratio": 0.5, "on": True}}
    assert decode(encode(body, str)) == body


def test_nan_is_written_as_json_dumps_writes_it_not_as_null() -> None:
    assert encode({"x": float("nan")}, str) == b'{"x": NaN}'


@pytest.mark.parametrize(("value", "plain"), [
    ({"a": [1, 2.5, True, None, "x", ("t", {"deep": [[]]})], "b": {}}, True),
    ([], True),
    ({"a": [{"b": {"c": datetime.date(2026, 12, 2)}}]}, False),
    ({"a": {1: "int key"}}, False),
    ({"a": [b"bytes"]}, False),
    ({"a": {"set"}}, False),
])
def test_plain_json_is_only_json_s_own_types_at_any_depth(value: object, plain: bool) -> None:
    assert plain_json(value) is plain


def test_a_set_based_selector_with_spaces_and_parentheses_selects_on_the_server(kube: Kube, namespace: str) -> None:
    for name, tier in (("web", "front"), ("api", "back"), ("cache", "back")):
        kube.apply(configmap(name, namespace, app=name, tier=tier))

    found = kube.list("v1", "ConfigMap", namespace, label_selector="app in (web, api),tier!=front")

    assert [c["metadata"]["name"] for c in found] == ["api"]


def test_a_merge_patch_with_a_null_removes_the_key_and_text_beyond_ascii_round_trips(kube: Kube,
                                                                                     namespace: str) -> None:
    kube.apply(configmap("c", namespace, {"greeting": "grüß dich — ☃", "old": "x"}))

    kube.patch("v1", "ConfigMap", "c", namespace, {"data": {"old": None}})

    assert (kube.get("v1", "ConfigMap", "c", namespace) or {})["data"] == {"greeting": "grüß dich — ☃"}


def test_a_refused_request_raises_with_the_servers_message(kube: Kube, namespace: str) -> None:
    with pytest.raises(PermanentError, match=r"(?i)invalid"):
        kube.create(configmap("Not_A_Valid_Name", namespace))
