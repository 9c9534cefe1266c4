"""One object applied by several steps of a plan, each with its own content (a StatefulSet's partition lowered
step by step): the latest started step's render is the one drift repair keeps, during the plan and after it."""

from __future__ import annotations

from planner_harness import Driver, apply_task, cm, instance, package, phase, plan, step

from engine.model import Package
from engine.planner import Apply

# The ConfigMap `shared` holds the name of the step that applied it.
SHARED = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\ndata:\n  step: \"{{ StepName }}\"\n"


def rolling_package() -> Package:
    steps = [step(name, "shared") for name in ("first", "second", "third")]
    return package({"shared.yaml": SHARED}, [apply_task("shared", "shared.yaml")],
                   [plan("deploy", phase("roll", *steps))])


def test_a_later_step_applying_the_same_object_is_not_undone_by_an_earlier_one() -> None:
    driver = Driver(rolling_package(), instance())

    final = driver.run()

    assert driver.plan_status() == "COMPLETE"
    assert driver.cluster.objects[cm("shared")]["data"] == {"step": "third"}
    assert final.actions == () and final.events == ()
    assert not [e for d in driver.decisions for e in d.events if e.reason == "DriftCorrected"]


def test_drift_of_an_object_several_steps_apply_restores_the_latest_render() -> None:
    driver = Driver(rolling_package(), instance())
    driver.run()
    driver.cluster.objects[cm("shared")]["data"]["step"] = "tampered"

    decision = driver.step(1)

    assert [o["data"] for a in decision.actions if isinstance(a, Apply) for o in a.objects] == [{"step": "third"}]
    assert [e.reason for e in decision.events] == ["DriftCorrected"]
    assert driver.cluster.objects[cm("shared")]["data"] == {"step": "third"}
