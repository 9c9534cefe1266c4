"""kplan test's subset matching: maps recursively, lists element-wise, null as absent, !regex patterns, and the
field-level differences (path, expected, actual) it reports when an object does not match."""

from __future__ import annotations

from typing import Any

import pytest

from engine.testing.matching import MISSING, Mismatch, Pattern, differences, matches, show

LIVE: dict[str, Any] = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "ml-train", "labels": {"kplan.dev/instance": "ml", "tier": "gpu"}},
    "spec": {"backoffLimit": 0, "template": {"spec": {"nodeSelector": {"node.kplan.dev/name": "node-2"}}}},
    "status": {"succeeded": 1, "ready": 0, "conditions": [{"type": "Complete", "status": "True"}]},
}


def test_a_subset_of_maps_matches_at_any_depth() -> None:
    expected = {"metadata": {"labels": {"tier": "gpu"}}, "spec": {"template": {"spec": {"nodeSelector": {}}}}}
    assert matches(expected, LIVE)
    assert matches({}, LIVE)


def test_lists_match_element_wise_and_need_the_same_length() -> None:
    assert matches({"status": {"conditions": [{"type": "Complete"}]}}, LIVE)
    assert differences({"status": {"conditions": [{}, {}]}}, LIVE) == [
        Mismatch("status.conditions", [{}, {}], LIVE["status"]["conditions"])
    ]
    assert differences({"status": {"conditions": [{"type": "Failed"}]}}, LIVE) == [
        Mismatch("status.conditions[0].type", "Failed", "Complete")
    ]


def test_every_differing_field_is_reported_with_its_path_in_document_order() -> None:
    expected = {"metadata": {"name": "ml-train", "labels": {"kplan.dev/instance": "other"}},
                "status": {"succeeded": 2, "failed": 0}}

    found = differences(expected, LIVE)

    assert found == [
        Mismatch('metadata.labels["kplan.dev/instance"]', "other", "ml"),
        Mismatch("status.succeeded", 2, 1),
        Mismatch("status.failed", 0, MISSING),
    ]
    assert [str(m) for m in found] == [
        'metadata.labels["kplan.dev/instance"]: expected "other", got "ml"',
        "status.succeeded: expected 2, got 1",
        "status.failed: expected 0, got <missing>",
    ]


def test_null_expects_the_field_absent_or_null() -> None:
    assert matches({"status": {"failed": None}}, LIVE)
    assert differences({"status": {"ready": None}}, LIVE) == [Mismatch("status.ready", None, 0)]


def test_a_pattern_searches_a_string() -> None:
    assert matches({"metadata": {"name": Pattern("^ml-")}}, LIVE)
    assert differences({"metadata": {"name": Pattern("^other")}}, LIVE) == [
        Mismatch("metadata.name", Pattern("^other"), "ml-train")
    ]
    assert not matches({"status": {"succeeded": Pattern("1")}}, LIVE)  # a pattern matches strings only


@pytest.mark.parametrize(("expected", "actual"), [(True, 1), (1, True), (False, 0), ("1", 1), (1, "1")])
def test_booleans_numbers_and_strings_never_equal_one_another(expected: Any, actual: Any) -> None:
    assert not matches(expected, actual)


def test_a_map_where_the_cluster_has_a_scalar_differs_as_a_whole() -> None:
    assert differences({"spec": {"backoffLimit": {"x": 1}}}, LIVE) == [Mismatch("spec.backoffLimit", {"x": 1}, 0)]


def test_values_print_as_json_and_long_ones_are_cut() -> None:
    assert show("COMPLETE") == '"COMPLETE"'
    assert show(MISSING) == "<missing>"
    assert show(Pattern("a.b")) == "/a.b/"
    assert show({"b": 1, "a": [True, None]}) == '{"a": [true, null], "b": 1}'
    long = show("x" * 500)
    assert len(long) == 160 and long.endswith("...")
