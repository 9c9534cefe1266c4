"""Property tests of plan compilation: random valid plans give acyclic graphs whose topological order
respects every serial and dependsOn edge; random dependsOn either compiles or names a real cycle;
the frontier and layers agree with the graph."""

from __future__ import annotations

import itertools

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import graph
from engine.errors import CycleError
from engine.model import Phase, Plan, Step, Strategy

strategies = st.sampled_from([Strategy.SERIAL, Strategy.PARALLEL])


@st.composite
def plans(draw: st.DrawFn, backward_deps: bool = False) -> Plan:
    """Plans with unique step names; dependsOn points only to earlier steps unless `backward_deps`."""
    sizes = draw(st.lists(st.integers(min_value=1, max_value=4), min_size=0, max_size=4))
    names = [f"s{index:02d}" for index in range(sum(sizes))]
    order = draw(st.permutations(names))  # names are not in declaration order
    phases, position = [], 0
    for p, size in enumerate(sizes):
        steps = []
        for name in order[position : position + size]:
            candidates = list(order) if backward_deps else list(order[: order.index(name)])
            deps = draw(st.lists(st.sampled_from(candidates), unique=True, max_size=3)) if candidates else []
            steps.append(Step(name, ("t",), depends_on=tuple(deps)))
        phases.append(Phase(f"p{p}", tuple(steps), draw(strategies)))
        position += size
    return Plan("deploy", tuple(phases), draw(strategies))


def required_edges(plan: Plan) -> set[tuple[str, str]]:
    """Every ordering the plan asks for, straight from DESIGN §4."""
    wanted = {(dep, s.name) for s in plan.steps for dep in s.depends_on}
    for phase in plan.phases:
        if phase.strategy is Strategy.SERIAL:
            wanted |= {(a.name, b.name) for a, b in zip(phase.steps, phase.steps[1:], strict=False)}
    if plan.strategy is Strategy.SERIAL:
        for before, after in zip(plan.phases, plan.phases[1:], strict=False):
            wanted |= {(a.name, b.name) for a in before.steps for b in after.steps}
    return wanted


@settings(max_examples=200, deadline=None)
@given(plans())
def test_valid_plans_compile_to_dags_that_respect_every_edge(plan: Plan) -> None:
    dag = graph.build(plan)
    assert nx.is_directed_acyclic_graph(dag)
    assert set(dag.nodes) == {s.name for s in plan.steps}
    assert set(dag.edges) == required_edges(plan)
    position = {name: index for index, name in enumerate(nx.topological_sort(dag))}
    assert all(position[a] < position[b] for a, b in required_edges(plan))
    assert graph.find_cycle(plan) is None


@settings(max_examples=200, deadline=None)
@given(plans())
def test_layers_and_frontier_agree_with_the_graph(plan: Plan) -> None:
    dag = graph.build(plan)
    layer_of = {name: index for index, layer in enumerate(graph.layers(dag)) for name in layer}
    assert sorted(layer_of) == sorted(dag.nodes)
    assert all(layer_of[a] < layer_of[b] for a, b in dag.edges)
    completed: set[str] = set()
    while True:  # running the plan by frontiers completes every step, predecessors first
        ready = graph.frontier(dag, completed)
        if not ready:
            break
        assert all(set(dag.predecessors(name)) <= completed for name in ready)
        completed |= set(ready)
    assert completed == set(dag.nodes)
    path, length = graph.critical_path(dag)
    assert length == len(path) == (len(graph.layers(dag)) if dag.nodes else 0)
    assert all(dag.has_edge(a, b) for a, b in itertools.pairwise(path))


@settings(max_examples=200, deadline=None)
@given(plans(backward_deps=True))
def test_any_plan_compiles_or_names_a_real_cycle(plan: Plan) -> None:
    cycle = graph.find_cycle(plan)
    try:
        dag = graph.build(plan)
    except CycleError as error:
        assert cycle is not None and list(error.cycle) == cycle
        assert cycle[0] == min(cycle)
        full = nx.DiGraph(sorted(required_edges(plan)))
        assert all(full.has_edge(a, b) for a, b in zip(cycle, [*cycle[1:], cycle[0]], strict=True))
    else:
        assert cycle is None and nx.is_directed_acyclic_graph(dag)
