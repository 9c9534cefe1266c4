"""Package verification: one broken package per rule, each reported with file, line, field and message."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import __version__
from engine.errors import PackageInvalid, Problem
from engine.package import loader, verify

FIXTURES = Path(__file__).parent.parent / "fixtures" / "packages"
DNS = (
    "is not a valid name: use at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit"
)

# Every problem verify reports for each package under fixtures/packages/broken/, in order.
EXPECTED: list[tuple[str, list[str]]] = [
    ("api-version", [
        "operator.yaml:1: apiVersion: must be kplan.dev/v1alpha1, got 'kplan.dev/v1' (error)",
    ]),
    ("apply-no-resources", [
        "operator.yaml:8: tasks[0].spec.resources: must not be empty (error)",
        "templates/app.yaml: is not used by any task (warning)",
    ]),
    ("bad-duration", [
        "operator.yaml:16: plans.deploy.phases[0].steps[0].timeout: must be a duration such as 90s, 10m or "
        "1h30m (error)",
    ]),
    ("bad-health", [
        "operator.yaml:12: health[0].healthy: needs exactly one of condition and jsonPath (error)",
    ]),
    ("bad-kplan-version", [
        "operator.yaml:4: kplanVersion: is not a version range: '=>0.1' is not a version or comparator (error)",
    ]),
    ("bad-package-name", [
        f"operator.yaml:2: name: 'Tiny_Package' {DNS} (error)",
    ]),
    ("bad-parameter-name", [
        "params.yaml:3: parameters[0].name: 'replica-count' is not a valid parameter name: use letters, "
        "digits and '_', not starting with a digit (error)",
    ]),
    ("bad-parameter-type", [
        "params.yaml:4: parameters[0].type: must be one of string, integer, number, boolean, array, map, got "
        "'int' (error)",
    ]),
    ("bad-pattern", [
        "params.yaml:8: parameters[1].pattern: is not a valid regular expression: unterminated character set "
        "at position 0 (error)",
    ]),
    ("bad-phase-name", [
        f"operator.yaml:12: plans.deploy.phases[0].name: '-main' {DNS} (error)",
    ]),
    ("bad-plan-name", [
        f"operator.yaml:16: plans.Backup_Plan: 'Backup_Plan' {DNS} (error)",
    ]),
    ("bad-step-name", [
        f"operator.yaml:14: plans.deploy.phases[0].steps[0].name: 'app step' {DNS} (error)",
    ]),
    ("bad-strategy", [
        "operator.yaml:11: plans.deploy.strategy: must be one of serial, parallel, got 'sometimes' (error)",
    ]),
    ("bad-task-name", [
        f"operator.yaml:5: tasks[0].name: 'App' {DNS} (error)",
    ]),
    ("bad-upgradable-from", [
        "operator.yaml:4: upgradableFrom[1]: is not a version range: '1.x.3' has a number after a wildcard (error)",
    ]),
    ("bad-version", [
        "operator.yaml:3: operatorVersion: must be a semantic version such as 0.3.0, got '0.1' (error)",
    ]),
    ("control-characters", [
        "operator.yaml:2: is not valid YAML: character #x0001 is not allowed (error)",
    ]),
    ("cycle", [
        "operator.yaml:10: plans.deploy: has a dependency cycle: b -> c -> b (error)",
    ]),
    ("default-bounds", [
        "params.yaml:5: parameters[0].default: must be at least 1, got 0 (error)",
    ]),
    ("default-enum", [
        "params.yaml:5: parameters[0].default: must be one of 1, 3, 5, got 2 (error)",
    ]),
    ("default-length", [
        "params.yaml:7: parameters[1].default: must have at least 8 characters (error)",
    ]),
    ("default-pattern", [
        "params.yaml:7: parameters[1].default: must match the pattern '^[0-9]+Gi$', got '10 GB' (error)",
    ]),
    ("default-type", [
        "params.yaml:5: parameters[0].default: must be an integer, got 'one' (error)",
    ]),
    ("duplicate-health", [
        "operator.yaml:14: health[1].kind: duplicates the health rule for Widget.example.com on line 11 (error)",
    ]),
    ("duplicate-key", [
        "operator.yaml:3: name: is given more than once (error)",
    ]),
    ("duplicate-parameter", [
        "params.yaml:6: parameters[1].name: duplicates the parameter name 'replicas' on line 3 (error)",
    ]),
    ("duplicate-phase", [
        "operator.yaml:16: plans.deploy.phases[1].name: duplicates the phase name 'main' on line 12 (error)",
    ]),
    ("duplicate-plan", [
        "operator.yaml:16: plans.deploy: is given more than once (error)",
    ]),
    ("duplicate-step", [
        "operator.yaml:16: plans.deploy.phases[0].steps[1].name: duplicates the step name 'app' on line 14 (error)",
    ]),
    ("duplicate-task", [
        "operator.yaml:9: tasks[1].name: duplicates the task name 'app' on line 5 (error)",
    ]),
    ("empty-operator", [
        "operator.yaml: is empty (error)",
    ]),
    ("empty-steps", [
        "operator.yaml:13: plans.deploy.phases[0].steps: must not be empty (error)",
    ]),
    ("enum-type", [
        "params.yaml:6: parameters[0].enum[1]: must be an integer, got 'three' (error)",
    ]),
    ("health-without-expectation", [
        "operator.yaml:10: health[0]: needs healthy, failed or both (error)",
    ]),
    ("health-json-path", [
        "operator.yaml:12: health[0].healthy: needs equals: the value expected at jsonPath (error)",
        "operator.yaml:12: health[0].healthy.jsonPath: must start with '.', as in .status.phase, got "
        "'status.phase' (error)",
    ]),
    ("include-cycle", [
        "templates/app.yaml:6: includes itself (app.yaml → data.yaml → app.yaml) (error)",
        "templates/data.yaml: is not used by any task (warning)",
    ]),
    ("min-above-max", [
        "params.yaml:5: parameters[0].minimum: is greater than maximum (error)",
    ]),
    ("misplaced-bound", [
        "params.yaml:8: parameters[1].minimum: applies only to integer and number parameters, not string (warning)",
    ]),
    ("missing-deploy", [
        "operator.yaml:9: plans.deploy: is required: it is the plan run on install (error)",
    ]),
    ("missing-field", [
        "operator.yaml:1: operatorVersion: is required (error)",
    ]),
    ("missing-task", [
        "operator.yaml:15: plans.deploy.phases[0].steps[0].tasks[1]: names the task 'init', which is not in "
        "tasks (error)",
    ]),
    ("missing-template", [
        "operator.yaml:8: tasks[0].spec.resources[1]: names the template 'service.yaml', which is not in "
        "templates/ (error)",
    ]),
    ("newer-kplan-version", [
        f"operator.yaml:4: kplanVersion: this kplan ({__version__}) is not in the range '>=9.0' (warning)",
    ]),
    ("no-operator", [
        "operator.yaml: is missing: broken/no-operator is not a package (error)",
    ]),
    ("not-a-mapping", [
        "operator.yaml:1: must be a mapping of fields (error)",
    ]),
    ("operator-without-package", [
        "operator.yaml:12: tasks[1].spec.package: is required (error)",
    ]),
    ("pipe-duplicate-key", [
        "operator.yaml:15: tasks[1].spec.pipe[1].key: duplicates the pipe key 'out' on line 14 (error)",
    ]),
    ("pipe-key", [
        "operator.yaml:14: tasks[1].spec.pipe[0].key: 'my key' is not a valid key: use letters, digits, '-', "
        "'_' and '.' (error)",
    ]),
    ("pipe-kind", [
        "operator.yaml:14: tasks[1].spec.pipe[0].kind: must be one of ConfigMap, Secret, got 'Volume' (error)",
    ]),
    ("tabs", [
        "operator.yaml:5: is not valid YAML: line is indented with a tab; YAML needs spaces (error)",
    ]),
    ("template-syntax", [
        "templates/app.yaml:4: syntax error: unexpected '}' (error)",
    ]),
    ("template-unknown-parameter", [
        "templates/app.yaml:7: Params.image: is not declared in params.yaml (error)",
    ]),
    ("toggle-non-boolean", [
        "operator.yaml:12: tasks[1].spec.parameter: names the parameter 'replicas' of type integer; Toggle "
        "needs a boolean parameter (error)",
    ]),
    ("toggle-unknown-parameter", [
        "operator.yaml:12: tasks[1].spec.parameter: names the parameter 'monitoring', which is not in "
        "params.yaml (error)",
    ]),
    ("trigger-unknown-plan", [
        "params.yaml:6: parameters[0].trigger: names the plan 'scale', which is not in operator.yaml (error)",
    ]),
    ("unknown-dependency", [
        "operator.yaml:16: plans.deploy.phases[0].steps[0].dependsOn[0]: names the step 'db', which is not "
        "in plan 'deploy' (error)",
    ]),
    ("unknown-field", [
        "operator.yaml:4: maintainer: unknown field (error)",
    ]),
    ("unknown-spec-field", [
        "operator.yaml:9: tasks[0].spec.forced: unknown field (error)",
    ]),
    ("unknown-task-kind", [
        "operator.yaml:6: tasks[0].kind: must be one of Apply, Delete, Toggle, Pipe, Operator, Wait, Dummy, "
        "got 'Create' (error)",
    ]),
    ("unused-template", [
        "templates/old.yaml: is not used by any task (warning)",
    ]),
    ("wait-resource", [
        "operator.yaml:13: tasks[1].spec.for[0].resource: must name a template file (*.yaml) or an object as "
        "kind/name, got 'my deployment' (error)",
    ]),
    ("wait-without-for", [
        "operator.yaml:12: tasks[1].spec.for: is required (error)",
    ]),
    ("wrong-type", [
        "operator.yaml:9: tasks[0].spec.force: must be true or false (error)",
    ]),
]


def problems_of(name: str) -> list[str]:
    files = loader.read_files(str(FIXTURES / "broken" / name))
    _, problems = verify.verify(files, f"broken/{name}")
    return [str(p) for p in problems]


@pytest.mark.parametrize(("name", "expected"), EXPECTED, ids=[name for name, _ in EXPECTED])
def test_each_rule_reports_exactly_its_problem(name: str, expected: list[str]) -> None:
    assert problems_of(name) == expected


def test_every_broken_fixture_has_an_expectation() -> None:
    folders = {p.name for p in (FIXTURES / "broken").iterdir()}
    assert folders - {name for name, _ in EXPECTED} == {"binary", "many-problems"}


@pytest.mark.parametrize(("name", "expected"), EXPECTED, ids=[name for name, _ in EXPECTED])
def test_load_raises_with_every_error_or_returns_the_warnings(name: str, expected: list[str]) -> None:
    source = str(FIXTURES / "broken" / name)
    if all(line.endswith("(warning)") for line in expected):
        _, warnings = loader.load_with_warnings(source)
        assert [str(w) for w in warnings] == expected
    else:
        with pytest.raises(PackageInvalid) as e:
            loader.load(source)
        located = [line.replace("broken/", f"{FIXTURES}/broken/") for line in expected]
        assert [str(p) for p in e.value.problems] == located


def test_all_problems_are_reported_in_one_pass() -> None:
    assert problems_of("many-problems") == [
        f"operator.yaml:2: name: 'Many' {DNS} (error)",
        "operator.yaml:3: operatorVersion: must be a semantic version such as 0.3.0, got 'one' (error)",
        "operator.yaml:4: maintainer: unknown field (error)",
        "operator.yaml:10: plans.deploy: is required: it is the plan run on install (error)",
        "operator.yaml:16: plans.install.phases[0].steps[0].tasks[1]: "
        "names the task 'init', which is not in tasks (error)",
        "operator.yaml:17: plans.install.phases[0].steps[0].dependsOn[0]: "
        "names the step 'db', which is not in plan 'install' (error)",
        "params.yaml:5: parameters[0].default: must be an integer, got 'one' (error)",
        "params.yaml:6: parameters[0].trigger: names the plan 'scale', which is not in operator.yaml (error)",
        "templates/app.yaml:6: Params.replica: is not declared in params.yaml (error)",
        "templates/old.yaml: is not used by any task (warning)",
        "templates/old.yaml:1: syntax error: Expected an expression, got 'end of statement block' (error)",
    ]


def test_package_invalid_says_how_many_more_problems_there_are() -> None:
    with pytest.raises(PackageInvalid) as e:
        loader.load(str(FIXTURES / "broken" / "many-problems"))
    assert str(e.value) == f"package is invalid: operator.yaml:2: name: 'Many' {DNS} (error) (and 9 more)"
    assert len(e.value.problems) == 11


def test_a_file_that_is_not_utf8_is_refused_before_verification() -> None:
    with pytest.raises(PackageInvalid) as e:
        loader.read_files(str(FIXTURES / "broken" / "binary"))
    assert e.value.problems == (Problem("operator.yaml", None, "", "is not UTF-8 text"),)


@pytest.mark.parametrize("name", ["valid", "minimal"])
def test_valid_packages_have_no_problems(name: str) -> None:
    pkg, problems = verify.verify(loader.read_files(str(FIXTURES / name)), name)
    assert problems == []
    assert pkg is not None


def test_verify_works_on_file_texts_without_params_yaml() -> None:
    files = loader.read_files(str(FIXTURES / "minimal"))
    del files["params.yaml"]
    _, problems = verify.verify(files, "memory")
    assert [str(p) for p in problems] == [
        "templates/app.yaml:6: Params.replicas: is not declared in params.yaml (error)"
    ]


def test_keys_given_twice_are_reported_with_their_field_path() -> None:
    files = loader.read_files(str(FIXTURES / "minimal"))
    files["params.yaml"] += "  - name: labels\n    type: map\n    default: {a: 1, a: 2}\n"
    _, problems = verify.verify(files, "memory")
    assert [str(p) for p in problems] == ["params.yaml:8: parameters[1].default.a: is given more than once (error)"]


def test_a_broken_document_hides_cross_reference_noise_but_not_other_findings() -> None:
    files = loader.read_files(str(FIXTURES / "minimal"))
    files["params.yaml"] = "parameters: [\n"
    files["templates/app.yaml"] = "{{ Name }\n"
    _, problems = verify.verify(files, "memory")
    assert [(p.file, p.line) for p in problems] == [("params.yaml", 2), ("templates/app.yaml", 1)]
