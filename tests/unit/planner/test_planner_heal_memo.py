"""What a pass over a settled plan remembers: a step found clean (nothing to heal) is not checked again while its
render and every live object it keeps (by uid and resourceVersion) are the same, and the plan's index is kept per
render. A new resourceVersion, a deleted object, an adoption by another Instance, another render, other values or
another owner are checked again."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from planner_harness import (
    NOW,
    SETTINGS,
    Cluster,
    Driver,
    applied,
    cm,
    instance,
    package,
    phase,
    plan,
    simple_package,
    step,
)

from engine.model import Parameter, ParamType, Task, TaskKind
from engine.planner import steps
from engine.planner.indexing import plan_index
from engine.planner.refs import Ref
from engine.planner.running import owner_of, plan_scope
from engine.planner.status import PlanStatus

VERSIONS = itertools.count(100)


class VersionedCluster(Cluster):
    """A Cluster whose objects carry a uid and a resourceVersion that every write moves, as the API server's do."""

    def put(self, obj: Mapping[str, Any]) -> None:
        super().put(obj)
        self.bump(Ref.of(obj))

    def bump(self, key: Ref) -> None:
        meta = self.objects[key]["metadata"]
        meta.setdefault("uid", f"uid-{key.name}")
        meta["resourceVersion"] = str(next(VERSIONS))


def settled(*names: str) -> Driver:
    driver = Driver(simple_package(*names), instance(), VersionedCluster())
    driver.run()
    assert driver.plan_status() == "COMPLETE"
    return driver


def scope_of(driver: Driver, values: Mapping[str, Any] | None = None) -> steps.PlanScope:
    pkg = driver.pkg
    return plan_scope(pkg, pkg.plan("deploy"), driver.cluster.objects, NOW, SETTINGS, values or {},
                      owner_of(pkg, driver.instance))


def complete(name: str) -> dict[str, Any]:
    return {"name": name, "status": PlanStatus.COMPLETE.value}


def test_a_settled_step_is_remembered_clean_for_the_versions_of_its_objects() -> None:
    driver = settled("a", "b")
    scope = scope_of(driver)

    for s in scope.plan.steps:
        assert steps.heal_step(scope, s, complete(s.name)).actions == ()
        seen = steps.clean_key(scope, s, True, frozenset())
        assert seen is not None and steps.CLEAN.get(seen[0]) is not None


def test_drift_with_a_new_resource_version_is_healed_after_clean_passes() -> None:
    driver = settled("a", "b")
    driver.step(1)
    driver.cluster.objects[cm("a")]["data"]["value"] = "tampered"
    driver.cluster.bump(cm("a"))

    decision = driver.step(1)

    assert applied(decision) == ["ConfigMap/a"]
    assert [e.reason for e in decision.events] == ["DriftCorrected"]
    assert driver.cluster.objects[cm("a")]["data"] == {"value": "v"}
    assert driver.step(1).actions == ()


def test_an_object_deleted_after_clean_passes_is_applied_again() -> None:
    driver = settled("a", "b")
    driver.step(1)
    del driver.cluster.objects[cm("b")]

    decision = driver.step(1)

    assert applied(decision) == ["ConfigMap/b"]
    assert cm("b") in driver.cluster.objects


def test_an_object_another_instance_adopted_after_clean_passes_is_left_to_it() -> None:
    driver = settled("a", "b")
    driver.step(1)
    live = driver.cluster.objects[cm("a")]
    live["metadata"]["ownerReferences"] = [{"apiVersion": "kplan.dev/v1alpha1", "kind": "Instance", "name": "other",
                                            "uid": "other-uid", "controller": True}]
    live["data"]["value"] = "theirs"
    driver.cluster.bump(cm("a"))

    decision = driver.step(1)

    assert applied(decision) == []
    assert driver.cluster.objects[cm("a")]["data"] == {"value": "theirs"}
    assert "a" not in [e["name"] for e in driver.status["appliedResources"]]


def test_another_render_is_checked_against_unchanged_objects() -> None:
    driver = settled("a")
    first, second = scope_of(driver, {"value": "v"}), scope_of(driver, {"value": "w"})
    a = first.plan.steps[0]
    assert steps.heal_step(first, a, complete("a")).actions == ()

    healed = steps.heal_step(second, a, complete("a"))

    assert [o["data"] for action in healed.actions for o in action.objects] == [{"value": "w"}]
    assert [e.message for e in healed.events] == ["ConfigMap shop/a drifted at data.value; applied it again"]


def test_objects_without_a_resource_version_are_never_remembered_clean() -> None:
    driver = Driver(simple_package("a"), instance(), Cluster())
    driver.run()
    scope = scope_of(driver)
    a = scope.plan.steps[0]

    assert steps.heal_step(scope, a, complete("a")).actions == ()
    assert steps.clean_key(scope, a, True, frozenset()) is None
    driver.cluster.objects[cm("a")]["data"]["value"] = "tampered"
    assert [o["data"] for action in steps.heal_step(scope, a, complete("a")).actions for o in action.objects] == [
        {"value": "v"}]


def test_the_plan_index_is_kept_per_render_values_and_owner() -> None:
    toggled = Task(name="t", kind=TaskKind.TOGGLE, parameter="on", resources=("t.yaml",))
    on = Parameter(name="on", type=ParamType.BOOLEAN, default=True, has_default=True, required=False)
    pkg = package({"t.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: t\n"}, [toggled],
                  [plan("deploy", phase("main", step("t")))], [on])
    owner = owner_of(pkg, instance())
    rendered = plan_scope(pkg, pkg.plan("deploy"), {}, NOW, SETTINGS, {"on": True}, owner).rendered
    deploy = pkg.plan("deploy")

    index = plan_index(pkg, deploy, rendered, {"on": True}, owner)

    assert plan_index(pkg, deploy, rendered, {"on": True}, owner) is index
    assert index.kinds == {"t": TaskKind.APPLY} and index.desired == {cm("t")}
    off = plan_index(pkg, deploy, rendered, {"on": False}, owner)
    assert off.kinds == {"t": TaskKind.DELETE} and off.desired == frozenset()
    other = plan_index(pkg, deploy, rendered, {"on": True}, owner_of(pkg, {**instance(), "metadata": {
        "name": "other", "namespace": "shop", "uid": "u2"}}))
    assert other is not index
