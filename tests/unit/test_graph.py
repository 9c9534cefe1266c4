"""Plans compiled to step DAGs: serial/parallel phases x serial/parallel steps x dependsOn, layers,
the frontier of ready steps, the critical path, cycle and unknown-name errors, and the drawings."""

from __future__ import annotations

import pytest

from engine import graph
from engine.errors import CycleError, PackageInvalid
from engine.model import Phase, Plan, Step, Strategy

S, P = Strategy.SERIAL, Strategy.PARALLEL
Edge = tuple[str, str]


def step(name: str, *depends_on: str) -> Step:
    return Step(name, (f"task-{name}",), depends_on=depends_on)


def two_phases(plan: Strategy, phases: Strategy, *extra: tuple[str, str]) -> Plan:
    """Phase one: a, b; phase two: c, d; `extra` are (step, dependsOn) pairs."""
    deps = {name: tuple(dep for target, dep in extra if target == name) for name in "abcd"}
    one = Phase("one", (step("a", *deps["a"]), step("b", *deps["b"])), phases)
    two = Phase("two", (step("c", *deps["c"]), step("d", *deps["d"])), phases)
    return Plan("deploy", (one, two), plan)


def edges(plan: Plan) -> set[tuple[str, str]]:
    return set(graph.build(plan).edges)


class TestBuild:
    @pytest.mark.parametrize(
        ("plan_strategy", "phase_strategy", "expected"),
        [
            (S, S, {("a", "b"), ("c", "d"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d")}),
            (S, P, {("a", "c"), ("a", "d"), ("b", "c"), ("b", "d")}),
            (P, S, {("a", "b"), ("c", "d")}),
            (P, P, set()),
        ],
    )
    def test_strategies(self, plan_strategy: Strategy, phase_strategy: Strategy, expected: set[Edge]) -> None:
        assert edges(two_phases(plan_strategy, phase_strategy)) == expected

    @pytest.mark.parametrize("plan_strategy", [S, P])
    @pytest.mark.parametrize("phase_strategy", [S, P])
    def test_depends_on_adds_edges_across_any_strategy(self, plan_strategy: Strategy, phase_strategy: Strategy) -> None:
        plan = two_phases(plan_strategy, phase_strategy, ("d", "a"), ("b", "a"))
        assert edges(plan) == edges(two_phases(plan_strategy, phase_strategy)) | {("a", "d"), ("a", "b")}

    def test_depends_on_within_a_parallel_phase_orders_just_those_steps(self) -> None:
        plan = Plan("deploy", (Phase("main", (step("x"), step("y", "x"), step("z")), P),))
        assert edges(plan) == {("x", "y")}
        assert graph.layers(graph.build(plan)) == [["x", "z"], ["y"]]

    def test_nodes_carry_step_and_phase(self) -> None:
        dag = graph.build(two_phases(S, S))
        assert list(dag.nodes) == ["a", "b", "c", "d"]
        assert dag.nodes["c"]["phase"] == "two"
        assert dag.nodes["c"]["step"] == step("c")

    def test_three_serial_phases_chain_only_neighbours(self) -> None:
        plan = Plan("deploy", (Phase("1", (step("a"),)), Phase("2", (step("b"),)), Phase("3", (step("c"),))))
        assert edges(plan) == {("a", "b"), ("b", "c")}

    def test_empty_plan(self) -> None:
        dag = graph.build(Plan("deploy", ()))
        assert dag.number_of_nodes() == 0
        assert graph.layers(dag) == [] and graph.frontier(dag, []) == []
        assert graph.critical_path(dag) == ([], 0.0)


class TestErrors:
    def test_unknown_depends_on_is_a_problem_per_name(self) -> None:
        plan = two_phases(P, P, ("c", "ghost"), ("a", "phantom"))
        with pytest.raises(PackageInvalid) as caught:
            graph.build(plan)
        problems = caught.value.problems
        assert [(p.field, p.file) for p in problems] == [
            ("plans.deploy.phases[0].steps[0].dependsOn", "operator.yaml"),
            ("plans.deploy.phases[1].steps[0].dependsOn", "operator.yaml"),
        ]
        assert "'phantom'" in problems[0].message and "'ghost'" in problems[1].message

    def test_duplicate_step_names_are_a_problem(self) -> None:
        plan = Plan("deploy", (Phase("one", (step("a"),)), Phase("two", (step("a"),))))
        with pytest.raises(PackageInvalid) as caught:
            graph.build(plan)
        assert "appears more than once" in str(caught.value)

    def test_depends_on_against_serial_order_is_a_cycle(self) -> None:
        plan = two_phases(S, P, ("a", "c"))
        with pytest.raises(CycleError) as caught:
            graph.build(plan)
        assert caught.value.cycle == ("a", "c")
        assert str(caught.value) == "plan 'deploy' has a dependency cycle: a -> c -> a"

    def test_cycle_starts_at_its_smallest_name(self) -> None:
        # edges x -> y -> z -> x
        plan = Plan("deploy", (Phase("main", (step("z", "y"), step("y", "x"), step("x", "z"), step("w")), P),))
        assert graph.find_cycle(plan) == ["x", "y", "z"]
        with pytest.raises(CycleError) as caught:
            graph.build(plan)
        assert caught.value.cycle == ("x", "y", "z")

    def test_self_dependency_is_a_cycle_of_one(self) -> None:
        plan = Plan("deploy", (Phase("main", (step("a", "a"),)),))
        assert graph.find_cycle(plan) == ["a"]

    def test_smallest_cycle_is_picked_deterministically(self) -> None:
        plan = Plan(
            "deploy",
            (Phase("main", (step("m", "n"), step("n", "m"), step("b", "c"), step("c", "d"), step("d", "b")), P),),
        )
        assert graph.find_cycle(plan) == ["b", "d", "c"]  # edges b -> d -> c -> b

    def test_find_cycle_is_none_for_a_dag_and_ignores_unknown_names(self) -> None:
        assert graph.find_cycle(two_phases(S, S)) is None
        assert graph.find_cycle(two_phases(P, P, ("a", "ghost"))) is None


class TestLayersAndFrontier:
    def test_layers(self) -> None:
        assert graph.layers(graph.build(two_phases(S, S))) == [["a"], ["b"], ["c"], ["d"]]
        assert graph.layers(graph.build(two_phases(S, P))) == [["a", "b"], ["c", "d"]]
        assert graph.layers(graph.build(two_phases(P, P, ("c", "b")))) == [["a", "b", "d"], ["c"]]

    def test_frontier_follows_completion(self) -> None:
        dag = graph.build(two_phases(S, P))
        assert graph.frontier(dag, []) == ["a", "b"]
        assert graph.frontier(dag, ["a"]) == ["b"]
        assert graph.frontier(dag, ["a", "b"]) == ["c", "d"]
        assert graph.frontier(dag, ["a", "b", "c", "d"]) == []

    def test_frontier_leaves_out_started_steps(self) -> None:
        dag = graph.build(two_phases(S, P))
        assert graph.frontier(dag, ["a", "b"], started=["c"]) == ["d"]

    def test_frontier_sorts_by_layer_then_name(self) -> None:
        plan = Plan("deploy", (Phase("main", (step("zz"), step("b", "zz"), step("a", "b"), step("y")), P),))
        dag = graph.build(plan)
        assert graph.frontier(dag, []) == ["y", "zz"]
        assert graph.frontier(dag, ["zz", "b"]) == ["y", "a"]  # y is in layer 0, a in layer 2

    def test_a_step_waits_for_every_predecessor(self) -> None:
        dag = graph.build(two_phases(P, P, ("d", "a"), ("d", "b")))
        assert "d" not in graph.frontier(dag, ["a"])
        assert "d" in graph.frontier(dag, ["a", "b"])


class TestCriticalPath:
    def test_unweighted_is_the_longest_chain(self) -> None:
        assert graph.critical_path(graph.build(two_phases(S, S))) == (["a", "b", "c", "d"], 4.0)
        assert graph.critical_path(graph.build(two_phases(S, P))) == (["a", "c"], 2.0)

    def test_weights_choose_the_heavier_branch(self) -> None:
        dag = graph.build(two_phases(S, P))
        assert graph.critical_path(dag, {"a": 1, "b": 5, "c": 2, "d": 3}) == (["b", "d"], 8.0)

    def test_missing_weights_count_one(self) -> None:
        dag = graph.build(two_phases(P, S))
        assert graph.critical_path(dag, {"c": 10}) == (["c", "d"], 11.0)


class TestDrawings:
    def test_text(self) -> None:
        text = graph.to_text(graph.build(two_phases(S, P, ("d", "c"))), "deploy")
        assert text == (
            "deploy: 4 steps, 3 layers, critical path a -> c -> d (3)\n"
            "  [1] a  phase one\n"
            "  [1] b  phase one\n"
            "  [2] c  phase two  after a, b\n"
            "  [3] d  phase two  after c\n"
        )

    def test_dot(self) -> None:
        dot = graph.to_dot(graph.build(two_phases(S, S)), 'the "deploy" plan')
        assert dot.startswith('digraph "the \\"deploy\\" plan" {\n')
        assert '  subgraph "cluster_0" {\n    label="one";\n    "a";\n    "b";\n  }\n' in dot
        arrows = [line for line in dot.splitlines() if "->" in line]
        assert arrows == ['  "a" -> "b";', '  "b" -> "c";', '  "c" -> "d";']

    def test_mermaid(self) -> None:
        mermaid = graph.to_mermaid(graph.build(two_phases(S, P)), "deploy")
        assert mermaid.startswith('---\ntitle: "deploy"\n---\nflowchart LR\n')
        assert '  subgraph p1["two"]\n    s2["c"]\n    s3["d"]\n  end\n' in mermaid
        assert [line for line in mermaid.splitlines() if "-->" in line] == [
            "  s0 --> s2",
            "  s0 --> s3",
            "  s1 --> s2",
            "  s1 --> s3",
        ]

    @pytest.mark.parametrize("draw", [graph.to_text, graph.to_dot, graph.to_mermaid])
    def test_drawings_are_deterministic(self, draw: object) -> None:
        plans = [two_phases(S, P, ("d", "c")), two_phases(S, P, ("d", "c"))]
        assert callable(draw)
        assert draw(graph.build(plans[0]), "t") == draw(graph.build(plans[1]), "t")

    def test_labels_with_quotes_are_escaped(self) -> None:
        plan = Plan("deploy", (Phase('say "hi"', (step("a"),)),))
        assert '["say #quot;hi#quot;"]' in graph.to_mermaid(graph.build(plan), "t")
