"""Printing test runs like a test runner (`=== RUN`, `--- PASS: case (3.2s)`) and as JUnit XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TextIO

from engine.testing.results import CaseResult, StepResult, SuiteResult

__all__ = ["Printer", "junit_xml", "seconds_text"]


def seconds_text(seconds: float) -> str:
    return f"{seconds:.1f}s"


class Printer:
    """Prints each case and step as it ends, then the closing `N passed, N failed` line."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def line(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()

    def case_started(self, name: str, namespace: str) -> None:
        self.line(f"=== RUN   {name} (namespace {namespace})")

    def step_ended(self, step: StepResult) -> None:
        verdict = "ok" if step.passed else "FAIL"
        self.line(f"    {step.title}: {verdict} ({seconds_text(step.seconds)})")
        if step.failure:
            self.line("\n".join(f"        {line}" for line in step.failure.splitlines()))

    def case_ended(self, case: CaseResult) -> None:
        if case.error:
            self.line(f"        {case.error}")
        self.line(f"--- {'PASS' if case.passed else 'FAIL'}: {case.name} ({seconds_text(case.seconds)})")

    def suite_ended(self, suite: SuiteResult) -> None:
        self.line(f"{suite.passed} passed, {suite.failed} failed ({suite.package}, {seconds_text(suite.seconds)})")


def junit_xml(suite: SuiteResult) -> str:
    """One <testsuite> for the package, one <testcase> per case; a failed case carries a <failure>."""
    root = ET.Element("testsuites", name="kplan test", tests=str(len(suite.cases)), failures=str(suite.failed),
                      errors="0", time=f"{suite.seconds:.3f}")
    element = ET.SubElement(root, "testsuite", name=suite.package, tests=str(len(suite.cases)),
                            failures=str(suite.failed), errors="0", skipped="0", time=f"{suite.seconds:.3f}",
                            timestamp=suite.started)
    for case in suite.cases:
        test = ET.SubElement(element, "testcase", classname=suite.package, name=case.name, time=f"{case.seconds:.3f}")
        failure = case.failure
        if failure is not None:
            node = ET.SubElement(test, "failure", message=" ".join(failure.splitlines()[:2]), type="AssertionError")
            node.text = failure
        steps = "\n".join(f"{s.title}: {'ok' if s.passed else 'FAIL'} ({seconds_text(s.seconds)})" for s in case.steps)
        ET.SubElement(test, "system-out").text = f"namespace {case.namespace}\n{steps}\n"
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
