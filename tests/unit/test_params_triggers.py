"""Which plan a parameter change runs (DESIGN §4 "Triggers"), and changes that are refused."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from engine import params
from engine.errors import ImmutableParameterChanged, PermanentError
from engine.model import Package, Parameter, Phase, Plan


def plan(name: str) -> Plan:
    return Plan(name=name, phases=(Phase(name="main", steps=()),))


def package(plans: tuple[str, ...], *parameters: Parameter) -> Package:
    return Package(
        name="demo",
        operator_version="0.1.0",
        tasks=(),
        plans=MappingProxyType({n: plan(n) for n in plans}),
        parameters=parameters,
    )


PARAMETERS = (
    Parameter(name="plain", required=False),
    Parameter(name="scale", required=False, trigger="scale"),
    Parameter(name="also_scale", required=False, trigger="scale"),
    Parameter(name="backup", required=False, trigger="backup"),
    Parameter(name="image", required=False, trigger="deploy"),
    Parameter(name="storage", required=False, immutable=True),
)
WITH_UPDATE = package(("deploy", "update", "scale", "backup"), *PARAMETERS)
WITHOUT_UPDATE = package(("deploy", "scale", "backup"), *PARAMETERS)
OLD = {"plain": "a", "scale": "1", "also_scale": "1", "backup": "x", "image": "i", "storage": "10Gi"}


def changed(**values: str) -> dict[str, str]:
    return OLD | values


def test_nothing_changed_runs_nothing() -> None:
    assert params.trigger_for_change(WITH_UPDATE, OLD, dict(OLD)) is None


def test_a_single_change_runs_its_trigger() -> None:
    assert params.trigger_for_change(WITH_UPDATE, OLD, changed(backup="y")) == "backup"


def test_without_a_trigger_a_change_runs_update_when_the_package_has_it() -> None:
    assert params.trigger_for_change(WITH_UPDATE, OLD, changed(plain="b")) == "update"


def test_without_a_trigger_or_update_plan_a_change_runs_deploy() -> None:
    assert params.trigger_for_change(WITHOUT_UPDATE, OLD, changed(plain="b")) == "deploy"


def test_deploy_wins_over_other_triggers() -> None:
    assert params.trigger_for_change(WITH_UPDATE, OLD, changed(image="j", scale="2", backup="y")) == "deploy"


def test_the_default_deploy_trigger_wins_too() -> None:
    assert params.trigger_for_change(WITHOUT_UPDATE, OLD, changed(plain="b", scale="2")) == "deploy"


def test_changes_that_agree_run_their_one_plan() -> None:
    assert params.trigger_for_change(WITH_UPDATE, OLD, changed(scale="2", also_scale="3")) == "scale"


def test_changes_that_disagree_are_refused_naming_parameters_and_plans() -> None:
    with pytest.raises(PermanentError) as e:
        params.trigger_for_change(WITH_UPDATE, OLD, changed(scale="2", backup="y", plain="b"))
    assert str(e.value) == (
        "the change is refused because its parameters trigger different plans: "
        "backup (plan backup), plain (plan update), scale (plan scale)"
    )


def test_an_immutable_parameter_may_not_change() -> None:
    with pytest.raises(ImmutableParameterChanged) as e:
        params.trigger_for_change(WITH_UPDATE, OLD, changed(storage="20Gi", image="j"))
    assert e.value.name == "storage"


def test_setting_an_immutable_parameter_that_had_no_value_is_a_change_too() -> None:
    old = {k: v for k, v in OLD.items() if k != "storage"}
    with pytest.raises(ImmutableParameterChanged):
        params.trigger_for_change(WITH_UPDATE, old, OLD)


def test_an_unchanged_immutable_parameter_is_fine() -> None:
    assert params.trigger_for_change(WITH_UPDATE, OLD, changed(scale="5")) == "scale"


def test_a_removed_value_is_a_change() -> None:
    new = {k: v for k, v in OLD.items() if k != "backup"}
    assert params.trigger_for_change(WITH_UPDATE, OLD, new) == "backup"


def test_names_the_package_does_not_declare_are_ignored() -> None:
    assert params.trigger_for_change(WITH_UPDATE, OLD | {"gone": 1}, OLD | {"gone": 2}) is None
