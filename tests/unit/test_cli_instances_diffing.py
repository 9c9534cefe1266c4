"""`kplan diff`'s comparisons: server bookkeeping stripped, Secret values masked, YAML diffs and drifted fields."""

from __future__ import annotations

import base64
from typing import Any

from engine.cli import diffing
from engine.cli.diffing import Drift


def configmap(**data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web", "namespace": "ns"}, "data": data}


def secret(**data: str) -> dict[str, Any]:
    encoded = {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "auth", "namespace": "ns"}, "data": encoded}


def test_what_the_server_keeps_for_itself_is_stripped() -> None:
    live = configmap(a="1")
    live["metadata"].update(uid="u", resourceVersion="7", generation=2, creationTimestamp="t",
                            managedFields=[{"manager": "kplan"}], labels={"app": "web"})
    live["status"] = {"phase": "x"}

    assert diffing.stripped(live) == {
        "apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1"},
        "metadata": {"name": "web", "namespace": "ns", "labels": {"app": "web"}},
    }
    assert diffing.stripped(None) is None


def test_equal_objects_have_no_diff_and_a_change_is_a_unified_diff() -> None:
    assert diffing.unified(configmap(a="1"), configmap(a="1"), "ConfigMap/ns/web") == ""

    text = diffing.unified(configmap(a="1", b="2"), configmap(a="1", b="3"), "ConfigMap/ns/web")

    lines = text.splitlines()
    assert lines[:2] == ["--- live/ConfigMap/ns/web", "+++ kplan/ConfigMap/ns/web"]
    assert "-  b: '2'" in lines and "+  b: '3'" in lines


def test_an_absent_object_diffs_as_all_added() -> None:
    text = diffing.unified(None, configmap(a="1"), "ConfigMap/ns/web")
    assert "+kind: ConfigMap" in text.splitlines()


def test_secret_values_are_masked_and_marked_where_they_differ() -> None:
    before, after = diffing.masked(secret(same="x", old="y"), secret(same="x", old="z", new="w"))

    assert before is not None and after is not None
    assert before["data"] == {"old": "***** (before)", "same": "*****"}
    assert after["data"] == {"new": "***** (after)", "old": "***** (after)", "same": "*****"}
    text = diffing.unified(before, after, "Secret/ns/auth")
    assert "y" not in text.replace("kind", "").split("data:")[1].replace("(after)", "").replace("(before)", "")


def test_string_data_is_masked_as_the_data_it_stands_for() -> None:
    rendered = {**secret(), "stringData": {"password": "hunter22"}}
    before, after = diffing.masked(secret(password="hunter22"), rendered)

    assert after is not None and "stringData" not in after
    assert before["data"] == after["data"] == {"password": "*****"}  # type: ignore[index]


def test_drift_lists_every_field_kplan_applies_that_the_live_object_holds_differently() -> None:
    rendered = {**configmap(a="1", b="2", c="3"), "metadata": {"name": "web", "namespace": "ns",
                                                              "annotations": {"kplan.dev/plan": "deploy"}}}
    live = {**configmap(a="1", b="9", d="4"), "metadata": {"name": "web", "namespace": "ns", "uid": "u"}}

    assert diffing.drifted(rendered, live) == [Drift(".data.b", "2", "9"), Drift(".data.c", "3", None)]


def test_a_secrets_string_data_is_no_drift_when_the_server_holds_it_as_data() -> None:
    rendered = {**secret(), "stringData": {"password": "hunter22"}}
    assert diffing.drifted(rendered, secret(password="hunter22")) == []
    assert diffing.drifted(rendered, {**secret(), "stringData": {"password": "hunter22"}}) == []
    assert [d.path for d in diffing.drifted(rendered, secret(password="other"))] == [".data.password"]
