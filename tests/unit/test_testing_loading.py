"""Reading a package's tests/ folder: cases and numbered steps, TestStep commands and their checks, asserts and
errors files, the optional TestSuite, and the problems reported for files that cannot be run as written."""

from __future__ import annotations

import pytest

from engine.testing import Command, Node, Pattern, TestsInvalid, Verb, load_suite
from engine.testing.model import DEFAULT_TIMEOUT

INSTALL = "apiVersion: kplan.dev/v1alpha1\nkind: TestStep\ncommands:\n  - install: {}\n"
ASSERT = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-config}\ndata: {a: b}\n"


def problems_of(files: dict[str, str]) -> tuple[str, ...]:
    with pytest.raises(TestsInvalid) as caught:
        load_suite(files, "app", "app")
    return caught.value.problems


def test_cases_are_folders_and_steps_run_in_the_order_of_their_numbers() -> None:
    suite = load_suite({
        "operator.yaml": "...",
        "tests/b-case/00-install.yaml": INSTALL,
        "tests/a-case/10-later.yaml": INSTALL,
        "tests/a-case/2-first.yaml": INSTALL,
        "tests/a-case/2-assert.yaml": ASSERT,
        "tests/a-case/README.md": "notes",
        "tests/a-case/fixtures/v2/operator.yaml": "a package a step may name",
    }, "app", "app")

    assert [c.name for c in suite.cases] == ["a-case", "b-case"]
    steps = suite.cases[0].steps
    assert [(s.index, s.name, s.title) for s in steps] == [(2, "first", "02-first"), (10, "later", "10-later")]
    assert [e.name for e in steps[0].asserts] == ["app-config"]
    assert steps[0].asserts[0].source == "tests/a-case/2-assert.yaml#1"
    assert steps[1].asserts == ()


def test_a_step_may_be_only_an_assert_with_the_default_timeout() -> None:
    suite = load_suite({"tests/c/00-assert.yaml": ASSERT, "tests/c/00-errors.yaml": ASSERT}, "app", "app")

    (step,) = suite.cases[0].steps
    assert (step.name, step.timeout, step.commands, len(step.asserts), len(step.errors)) == (
        "step", DEFAULT_TIMEOUT, (), 1, 1)


def test_commands_are_read_with_their_fields() -> None:
    text = """apiVersion: kplan.dev/v1alpha1
kind: TestStep
timeout: 2m
commands:
  - install: {instance: ml, package: ../v1, parameters: {replicas: 3, tags: [a]}}
  - update: {parameters: {note: x}}
    expectFailure: immutable
  - upgrade: {package: ../v2}
  - trigger: {plan: backup}
  - uninstall:
  - label: {node: node2, labels: {gpu: "true", old: null}}
  - delete: {apiVersion: batch/v1, kind: Job, name: stuck}
  - kplan: [plan, status, --instance, ml]
    expectFailure: true
"""
    (step,) = load_suite({"tests/c/01-all.yaml": text}, "app", "app").cases[0].steps
    where = "tests/c/01-all.yaml#1: commands"

    assert step.timeout == 120.0
    assert step.commands == (
        Command(Verb.INSTALL, f"{where}[0]", instance="ml", package="../v1",
                parameters={"replicas": 3, "tags": ["a"]}),
        Command(Verb.UPDATE, f"{where}[1]", parameters={"note": "x"}, expect_failure="immutable"),
        Command(Verb.UPGRADE, f"{where}[2]", package="../v2"),
        Command(Verb.TRIGGER, f"{where}[3]", plan="backup"),
        Command(Verb.UNINSTALL, f"{where}[4]"),
        Command(Verb.LABEL, f"{where}[5]", node="node2", labels={"gpu": "true", "old": None}),
        Command(Verb.DELETE, f"{where}[6]", target={"apiVersion": "batch/v1", "kind": "Job", "name": "stuck"}),
        Command(Verb.KPLAN, f"{where}[7]", args=("plan", "status", "--instance", "ml"), expect_failure=True),
    )


def test_other_documents_of_a_step_file_are_objects_to_apply() -> None:
    text = INSTALL + "---\n" + ASSERT
    (step,) = load_suite({"tests/c/00-setup.yaml": text}, "app", "app").cases[0].steps

    assert len(step.commands) == 1
    assert step.objects == ({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app-config"},
                             "data": {"a": "b"}},)


def test_regex_tags_become_patterns_and_unnamed_expectations_have_no_name() -> None:
    text = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: !regex ^ml-\nstatus: {message: !regex 'x+'}\n"
    (step,) = load_suite({"tests/c/00-assert.yaml": text}, "app", "app").cases[0].steps

    (expected,) = step.asserts
    assert expected.fields["metadata"]["name"] == Pattern("^ml-")
    assert expected.fields["status"]["message"] == Pattern("x+")
    assert expected.name is None and expected.kind == "Job"


def test_the_suite_file_gives_nodes_and_the_default_timeout() -> None:
    settings = """apiVersion: kplan.dev/v1alpha1
kind: TestSuite
timeout: 45s
nodes:
  - name: node1
    labels: {node.kplan.dev/name: node1}
  - name: node2
"""
    suite = load_suite({"tests/kplan-test.yaml": settings, "tests/c/00-assert.yaml": ASSERT}, "app", "app")

    assert suite.nodes == (Node("node1", {"node.kplan.dev/name": "node1"}), Node("node2", {}))
    assert suite.timeout == 45.0
    assert suite.cases[0].steps[0].timeout == 45.0


def test_only_the_named_cases_are_loaded_and_an_unknown_one_is_refused() -> None:
    files = {"tests/a/00-assert.yaml": ASSERT, "tests/b/00-assert.yaml": ASSERT}

    assert [c.name for c in load_suite(files, "app", "app", ["b"]).cases] == ["b"]
    with pytest.raises(TestsInvalid, match=r"no test case named 'c' \(cases: a, b\)"):
        load_suite(files, "app", "app", ["c"])


def test_a_package_without_cases_is_refused() -> None:
    assert problems_of({"operator.yaml": "", "tests/kplan-test.yaml": "kind: TestSuite\n"}) == (
        "package app has no test cases (folders under tests/ with NN-*.yaml files)",)


@pytest.mark.parametrize(("text", "problem"), [
    ("kind: TestStep\ncommands:\n  - instal: {}\n",
     "tests/c/00-x.yaml#1: commands[0]: must be one of install, update, upgrade, trigger, uninstall, label, "
     "delete, kplan (with an optional expectFailure)"),
    ("kind: TestStep\ncommands:\n  - install: {}\n    update: {parameters: {a: 1}}\n",
     "tests/c/00-x.yaml#1: commands[0]: must be one of"),
    ("kind: TestStep\ncommands:\n  - update: {instance: x}\n",
     "tests/c/00-x.yaml#1: commands[0]: update takes instance, parameters and needs parameters"),
    ("kind: TestStep\ncommands:\n  - update: {parameters: {}}\n",
     "tests/c/00-x.yaml#1: commands[0]: update needs at least one parameter"),
    ("kind: TestStep\ncommands:\n  - trigger: {plan: b, wait: true}\n",
     "tests/c/00-x.yaml#1: commands[0]: trigger takes instance, plan"),
    ("kind: TestStep\ncommands:\n  - install: {parameters: [a]}\n",
     "tests/c/00-x.yaml#1: commands[0]: install.parameters must be a mapping"),
    ("kind: TestStep\ncommands:\n  - kplan: plan status\n",
     "tests/c/00-x.yaml#1: commands[0]: kplan takes a list of arguments"),
    ("kind: TestStep\ncommands:\n  - uninstall: {}\n    expectFailure: 3\n",
     "tests/c/00-x.yaml#1: commands[0]: expectFailure must be true or a text"),
    ("kind: TestStep\ntimeout: soon\n", "tests/c/00-x.yaml#1: timeout 'soon' is not a duration"),
    ("kind: TestStep\nretries: 2\n", "tests/c/00-x.yaml#1: unknown field(s) retries"),
    ("apiVersion: kplan.dev/v2\nkind: TestStep\n", "tests/c/00-x.yaml#1: apiVersion must be kplan.dev/v1alpha1"),
    ("apiVersion: v1\nkind: ConfigMap\n", "tests/c/00-x.yaml#1: ConfigMap to apply needs metadata.name"),
    ("- a list\n", "tests/c/00-x.yaml#1: must be a mapping"),
])
def test_a_step_file_that_cannot_run_says_where_and_why(text: str, problem: str) -> None:
    (found,) = problems_of({"tests/c/00-x.yaml": text})
    assert found.startswith(problem), found


def test_badly_named_files_and_broken_yaml_are_reported() -> None:
    assert problems_of({"tests/c/assert.yaml": ASSERT, "tests/c/00-ok.yaml": INSTALL}) == (
        "tests/c/assert.yaml: not a step file: name it NN-<name>.yaml, NN-assert.yaml or NN-errors.yaml",)
    (broken,) = problems_of({"tests/c/00-assert.yaml": "a: [b\n"})
    assert broken == "tests/c/00-assert.yaml:2: not valid YAML: expected ',' or ']', but got '<stream end>'"
    (unkinded,) = problems_of({"tests/c/00-assert.yaml": "metadata: {name: x}\n"})
    assert unkinded == "tests/c/00-assert.yaml#1: an object needs apiVersion and kind"


def test_every_problem_is_reported_at_once() -> None:
    problems = problems_of({
        "tests/kplan-test.yaml": "kind: TestSuite\nnodes: [{labels: {a: b}}]\n",
        "tests/c/00-x.yaml": "kind: TestStep\ncommands: [{bogus: {}}]\n",
        "tests/d/1-assert.yaml": "kind: ConfigMap\n",
    })
    assert len(problems) == 3
    assert problems[0] == "tests/kplan-test.yaml: nodes[0]: must be a mapping with a name"
