"""Property: any DAG-shaped plan of Dummy and Apply tasks whose objects become healthy runs to COMPLETE,
and no step starts before all of its predecessors are COMPLETE."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from planner_harness import Driver, apply_task, configmap, instance, package, step_statuses

from engine import graph
from engine.model import Package, Phase, Plan, Step, Strategy, Task, TaskKind


@st.composite
def dag_packages(draw: st.DrawFn) -> Package:
    count = draw(st.integers(min_value=1, max_value=8))
    names = [f"s{i}" for i in range(count)]
    steps = [
        Step(name, (name,), tuple(sorted(draw(st.sets(st.sampled_from(names[:i]))) if i else ())))
        for i, name in enumerate(names)
    ]
    cuts = sorted(draw(st.sets(st.integers(min_value=1, max_value=max(count - 1, 1)), max_size=2)))
    bounds = [0, *[c for c in cuts if c < count], count]
    strategies = st.sampled_from([Strategy.SERIAL, Strategy.PARALLEL])
    phases = tuple(Phase(f"p{i}", tuple(steps[a:b]), draw(strategies)) for i, (a, b) in
                   enumerate(itertools.pairwise(bounds)) if b > a)
    kinds = [draw(st.sampled_from(["apply", "dummy"])) for _ in names]
    tasks = [apply_task(n, f"{n}.yaml") if k == "apply" else Task(n, TaskKind.DUMMY) for n, k in zip(names, kinds,
                                                                                                        strict=True)]
    templates = {f"{n}.yaml": configmap(n) for n in names}
    return package(templates, tasks, [Plan("deploy", phases, draw(strategies))])


def started_now(previous: dict[str, str], current: dict[str, str]) -> list[str]:
    return [name for name, state in current.items() if previous.get(name, "PENDING") == "PENDING" != state]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dag_packages())
def test_every_dag_plan_completes_in_dependency_order(pkg: Package) -> None:
    dag = graph.build(pkg.plans["deploy"])
    driver = Driver(pkg, instance())
    previous: dict[str, str] = {}
    for _ in range(3 * dag.number_of_nodes() + 3):
        decision = driver.step(1)
        current = step_statuses(decision.status)
        for name in started_now(previous, current):
            for pred in dag.predecessors(name):
                assert current[pred] == "COMPLETE", (name, pred, current)
                assert previous.get(pred, "PENDING") != "PENDING", (name, pred, previous)  # started earlier
        previous = current
        if decision.status["plans"]["deploy"]["status"] == "COMPLETE":
            break
    assert driver.plan_status() == "COMPLETE"
    assert set(previous.values()) == {"COMPLETE"}
    assert driver.step(1).actions == ()
