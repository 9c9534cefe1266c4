"""`kplan plan graph PKG`: a plan's step DAG as text (default), Graphviz dot or Mermaid."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli.main import main

VALID = str(Path(__file__).parent.parent / "fixtures" / "packages" / "valid")


def drawn(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["plan", "graph", VALID, *argv]) == 0
    return capsys.readouterr().out


def test_text_is_the_default_and_lists_steps_by_layer(capsys: pytest.CaptureFixture[str]) -> None:
    lines = drawn(capsys).splitlines()
    assert lines[0].startswith("demo 0.3.0 plan deploy: 4 steps, 3 layers")
    assert [line.split()[:2] for line in lines[1:]] == [["[1]", "config"], ["[2]", "app"], ["[2]", "monitoring"],
                                                        ["[3]", "init"]]


def test_mermaid_has_a_node_per_step_and_the_edges(capsys: pytest.CaptureFixture[str]) -> None:
    out = drawn(capsys, "-o", "mermaid")
    assert "flowchart" in out
    for step in ("config", "app", "init", "monitoring"):
        assert f'["{step}"]' in out
    assert out.count("-->") == 3


def test_dot_draws_the_chosen_plan(capsys: pytest.CaptureFixture[str]) -> None:
    out = drawn(capsys, "-o", "dot", "--plan", "backup")
    assert out.startswith('digraph "demo 0.3.0 plan backup" {')
    assert '"ready" -> "backup";' in out
    assert out.rstrip().endswith("}")


def test_an_unknown_plan_is_one_sentence(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "graph", VALID, "--plan", "nope"]) == 1
    assert capsys.readouterr().err == "error: the package has no plan named 'nope'\n"


def test_a_format_graph_does_not_print_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "graph", VALID, "-o", "yaml"]) == 2
    assert capsys.readouterr().err == "error: plan graph does not take -o yaml (it prints text, dot, mermaid)\n"


def test_plan_without_a_subcommand_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as e:
        main(["plan"])
    assert e.value.code == 2
