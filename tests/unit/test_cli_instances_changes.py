"""What update, upgrade and rollback decide before touching the cluster: triggered plans, refusals, patches."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.cli import changes
from engine.errors import ImmutableParameterChanged, PermanentError, UpgradeRefused
from engine.package import loader

PACKAGES = Path(__file__).parent.parent / "e2e" / "packages"
V1, V2, V3 = (loader.load(str(PACKAGES / name)) for name in ("cli-app", "cli-app-v2", "cli-app-v3"))
OTHER = loader.load(str(PACKAGES / "cli-child"))
BASE = {"password": "long-enough"}


@pytest.mark.parametrize(("given", "plan"), [
    ({"note": "nightly"}, "backup"),
    ({"replicas": 2}, "update"),
    ({"replicas": 1}, None),
    ({}, None),
])
def test_a_parameter_change_runs_the_plan_its_trigger_names(given: dict[str, object], plan: str | None) -> None:
    assert changes.triggered_plan(V1, BASE, {**BASE, **given}) == plan


def test_an_immutable_parameter_may_not_change() -> None:
    with pytest.raises(ImmutableParameterChanged, match="parameter 'zone' is immutable"):
        changes.triggered_plan(V1, BASE, {**BASE, "zone": "b"})


def test_parameters_whose_triggers_disagree_are_refused_together() -> None:
    with pytest.raises(PermanentError, match=r"note \(plan backup\), replicas \(plan update\)"):
        changes.triggered_plan(V1, BASE, {**BASE, "note": "x", "replicas": 2})


def test_an_invalid_new_value_is_refused() -> None:
    with pytest.raises(PermanentError, match="parameter 'replicas' must be at most 5, got 9"):
        changes.triggered_plan(V1, BASE, {**BASE, "replicas": 9})


def test_an_upgrade_must_be_newer_and_allowed_by_upgradable_from() -> None:
    changes.upgrade_check(V2, V1)
    with pytest.raises(UpgradeRefused, match=re.escape("from 0.1.0 to 0.3.0: 0.3.0 is upgradable only from 0.2.x")):
        changes.upgrade_check(V3, V1)
    with pytest.raises(UpgradeRefused, match=re.escape("from 0.2.0 to 0.1.0: the new version must be newer")):
        changes.upgrade_check(V1, V2)
    with pytest.raises(UpgradeRefused, match=re.escape("from 0.1.0 to 0.1.0: the new version must be newer")):
        changes.upgrade_check(V1, V1)
    with pytest.raises(UpgradeRefused, match="runs package 'cli-app', not 'cli-child'"):
        changes.upgrade_check(OTHER, V1)


def test_an_upgrade_may_not_give_an_immutable_parameter_a_new_value() -> None:
    in_force = changes.resolved_or_given(V1, BASE)
    assert in_force["zone"] == "a"
    changes.immutables_kept(V2, in_force, {"zone": "a", "tier": "x"})
    with pytest.raises(ImmutableParameterChanged, match="parameter 'zone' is immutable"):
        changes.immutables_kept(V2, in_force, {"zone": "b"})


def test_a_parameters_patch_sets_what_changed_and_removes_what_is_gone() -> None:
    assert changes.parameters_patch({"a": 1, "b": 2, "c": 3}, {"a": 1, "c": 4, "d": 5}) == {"c": 4, "d": 5, "b": None}
    assert changes.parameters_patch({"a": 1}, {"a": 1}) == {}


def test_a_parameters_patch_replaces_map_values_instead_of_merging_them() -> None:
    current = {"m": {"a": "1", "n": {"x": 1, "y": 2}}, "e": {"k": "v"}, "s": "keep"}
    wanted = {"m": {"b": "2", "n": {"x": 1}}, "e": {}, "s": "keep"}

    assert changes.parameters_patch(current, wanted) == {"m": {"a": None, "b": "2", "n": {"y": None}},
                                                         "e": {"k": None}}
    assert changes.parameters_patch({"m": "text"}, {"m": {"a": 1}}) == {"m": {"a": 1}}


HISTORY = [
    {"operatorVersion": "cli-app-0.1.0", "parameters": {"note": "none", "replicas": 1, "zone": "a"}, "at": "t1"},
    {"operatorVersion": "cli-app-0.1.0", "parameters": {"note": "kept", "replicas": 1, "zone": "a"}, "at": "t2"},
    {"operatorVersion": "cli-app-0.2.0", "parameters": {"note": "kept", "replicas": 1, "tier": "gold", "zone": "a"},
     "at": "t3"},
]


def test_rollback_goes_to_the_newest_entry_that_differs_from_the_spec() -> None:
    now = changes.public_values(V2, {"password": "long-enough", "note": "kept"})
    assert now == {"note": "kept", "replicas": 1, "tier": "gold", "zone": "a"}
    assert changes.rollback_entry(HISTORY, "cli-app-0.2.0", now) == HISTORY[1]
    assert changes.rollback_entry(HISTORY[:1], "cli-app-0.1.0", HISTORY[0]["parameters"]) is None
    assert changes.rollback_entry([], "cli-app-0.1.0", {}) is None


def test_rollback_keeps_the_current_value_of_secret_parameters() -> None:
    restored = changes.rollback_parameters(V1, HISTORY[1], {"password": "long-enough", "tier": "gold"})
    assert restored == {"note": "kept", "replicas": 1, "zone": "a", "password": "long-enough"}
