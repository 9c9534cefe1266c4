"""kplan test's output: runner-style lines per case and step, the closing count, JUnit XML that parses with the
failure's field-level text; and the kplan command lines a TestStep's commands become, in the case's namespace."""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from engine.errors import PermanentError
from engine.testing import CaseResult, Command, StepResult, SuiteResult, Verb, junit_xml
from engine.testing.commands import Scope, argv, instance_of
from engine.testing.report import Printer
from engine.testing.running import namespace_for

FAILURE = ('not as expected after 3.0s:\ntests/c/00-assert.yaml#1: Job app in namespace c-1 differs\n'
           '  status.succeeded: expected 2, got 1')
PASSED = CaseResult("install", "install-abc123", 3.21, (StepResult("00-install", 3.2),))
FAILED = CaseResult("broken", "broken-def456", 3.0, (StepResult("00-install", 0.5), StepResult("01-update", 2.5,
                                                                                            FAILURE)))
SUITE = SuiteResult("app", (PASSED, FAILED), 6.21, "2024-05-01T12:00:00+00:00")


def test_cases_and_steps_print_like_a_test_runner() -> None:
    out = io.StringIO()
    printer = Printer(out)

    printer.case_started("broken", "broken-def456")
    for step in FAILED.steps:
        printer.step_ended(step)
    printer.case_ended(FAILED)
    printer.suite_ended(SUITE)

    assert out.getvalue().splitlines() == [
        "=== RUN   broken (namespace broken-def456)",
        "    00-install: ok (0.5s)",
        "    01-update: FAIL (2.5s)",
        "        not as expected after 3.0s:",
        "        tests/c/00-assert.yaml#1: Job app in namespace c-1 differs",
        "          status.succeeded: expected 2, got 1",
        "--- FAIL: broken (3.0s)",
        "1 passed, 1 failed (app, 6.2s)",
    ]


def test_junit_xml_has_one_testcase_per_case_and_the_failure_text() -> None:
    root = ET.fromstring(junit_xml(SUITE))

    assert (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", "2", "1")
    (suite,) = root.findall("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("time")) == ("app", "2", "1",
                                                                                                 "6.210")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"install", "broken"}
    assert cases["install"].find("failure") is None
    failure = cases["broken"].find("failure")
    assert failure is not None
    assert failure.get("message") == "step 01-update: not as expected after 3.0s: tests/c/00-assert.yaml#1: Job " \
                                     "app in namespace c-1 differs"
    assert "status.succeeded: expected 2, got 1" in (failure.text or "")
    assert "namespace broken-def456" in (cases["broken"].findtext("system-out") or "")


def test_a_case_that_could_not_start_fails_with_its_error() -> None:
    case = CaseResult("x", "x-1", 0.1, (), "the case could not start: forbidden")
    assert not case.passed and case.failure == "the case could not start: forbidden"


SCOPE = Scope("case-1", "app", "/pkgs/app", Path("/tmp/scratch"), ("--kubeconfig", "/k"))


def test_kplan_commands_become_command_lines_in_the_case_namespace(tmp_path: Path) -> None:
    package = tmp_path / "app"
    package.mkdir()
    scope = Scope("case-1", "app", str(package), tmp_path, ("--kubeconfig", "/k"))

    def line(command: Command, parameters: str | None = None) -> list[str]:
        return argv(command, scope, parameters)

    tail = ["-n", "case-1", "--kubeconfig", "/k"]
    assert line(Command(Verb.INSTALL, "w"), "/p.yaml") == ["install", str(package), "--instance", "app", "-P",
                                                           "/p.yaml", *tail]
    assert line(Command(Verb.UPDATE, "w", instance="db"), "/p.yaml") == ["update", "--instance", "db", "-P",
                                                                         "/p.yaml", *tail]
    assert line(Command(Verb.UPGRADE, "w", package="../v2")) == ["upgrade", str(tmp_path / "v2"), "--instance",
                                                                 "app", *tail]
    assert line(Command(Verb.TRIGGER, "w", plan="backup")) == ["plan", "trigger", "backup", "--instance", "app",
                                                               *tail]
    assert line(Command(Verb.UNINSTALL, "w")) == ["uninstall", "--instance", "app", *tail]
    assert line(Command(Verb.KPLAN, "w", args=("plan", "status"))) == ["plan", "status", *tail]


def test_a_relative_package_needs_the_package_under_test_to_be_a_folder() -> None:
    with pytest.raises(PermanentError, match="relative to the package under test, which is not a folder"):
        argv(Command(Verb.UPGRADE, "w", package="../v2"), SCOPE)


def test_only_commands_that_change_an_instance_name_it() -> None:
    assert instance_of(Command(Verb.UPDATE, "w"), SCOPE) == "app"
    assert instance_of(Command(Verb.TRIGGER, "w", instance="db"), SCOPE) == "db"
    assert instance_of(Command(Verb.UNINSTALL, "w"), SCOPE) is None
    assert instance_of(Command(Verb.LABEL, "w"), SCOPE) is None


def test_case_namespaces_are_dns_labels_unique_per_run() -> None:
    first, second = namespace_for("Parameter_Change"), namespace_for("Parameter_Change")
    assert first != second
    assert re.fullmatch(r"parameter-change-[0-9a-f]{6}", first)
    assert len(namespace_for("x" * 100)) <= 63
