"""Running a suite: each case in a namespace of its own, its steps in order, each step waited on with a deadline."""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from engine.errors import KplanError
from engine.kube import Clock, Kube
from engine.testing.cluster import label_nodes
from engine.testing.commands import CliRunner, Scope, apply_object, instance_of, run_command
from engine.testing.model import Case, Step, Suite
from engine.testing.observing import Observer
from engine.testing.report import Printer, seconds_text
from engine.testing.results import CaseResult, StepResult, SuiteResult

__all__ = ["Run", "namespace_for", "run_suite"]


@dataclass(frozen=True)
class Run:
    """How to run a suite: the package as given, the connection flags for kplan commands, and whether the
    cluster is a throwaway one (namespaces of cases are then left in place)."""

    source: str
    connection: tuple[str, ...]
    scratch: Path
    throwaway: bool


def namespace_for(case: str) -> str:
    """`<case>-<random>`: a DNS label unique to one run of the case."""
    stem = re.sub(r"[^a-z0-9-]+", "-", case.lower()).strip("-")[:50].strip("-") or "case"
    return f"{stem}-{secrets.token_hex(3)}"


def run_suite(suite: Suite, run: Run, kube: Kube, cli: CliRunner, printer: Printer) -> SuiteResult:
    """Run every case of `suite` against the cluster `kube` reaches (a manager must be running there)."""
    clock = kube.clock
    started, begin = datetime.now(UTC).isoformat(timespec="seconds"), clock.monotonic()
    observer = Observer(kube)
    try:
        cases = tuple(run_case(suite, case, run, kube, cli, observer, printer) for case in suite.cases)
    finally:
        observer.close()
    result = SuiteResult(suite.package, cases, clock.monotonic() - begin, started)
    printer.suite_ended(result)
    return result


def run_case(suite: Suite, case: Case, run: Run, kube: Kube, cli: CliRunner, observer: Observer,
             printer: Printer) -> CaseResult:
    clock = kube.clock
    begin, namespace = clock.monotonic(), namespace_for(case.name)
    printer.case_started(case.name, namespace)
    steps: list[StepResult] = []
    try:
        label_nodes(kube, suite.nodes)
        kube.create({"apiVersion": "v1", "kind": "Namespace",
                     "metadata": {"name": namespace, "labels": {"kplan.dev/test-case": case.name[:63]}}})
    except KplanError as err:
        result = CaseResult(case.name, namespace, clock.monotonic() - begin, (), f"the case could not start: {err}")
        printer.case_ended(result)
        return result
    scope = Scope(namespace, suite.instance, run.source, run.scratch, run.connection)
    for step in case.steps:
        steps.append(run_step(step, scope, kube, cli, observer, clock))
        printer.step_ended(steps[-1])
        if not steps[-1].passed:
            break
    if not run.throwaway:
        kube.delete("v1", "Namespace", namespace)
    result = CaseResult(case.name, namespace, clock.monotonic() - begin, tuple(steps))
    printer.case_ended(result)
    return result


def run_step(step: Step, scope: Scope, kube: Kube, cli: CliRunner, observer: Observer, clock: Clock) -> StepResult:
    """Apply the step's objects, run its commands, then wait until its asserts hold and its errors are absent."""
    begin = clock.monotonic()
    try:
        failure = act(step, scope, kube, cli)
        if failure is None:
            failure = await_expectations(step, scope, observer, step.timeout - (clock.monotonic() - begin))
    except KplanError as err:
        failure = f"{err}"
    return StepResult(step.title, clock.monotonic() - begin, failure)


def act(step: Step, scope: Scope, kube: Kube, cli: CliRunner) -> str | None:
    for obj in step.objects:
        apply_object(kube, obj, scope.namespace)
    for number, command in enumerate(step.commands):
        failure = run_command(command, number, scope, kube, cli)
        if failure is not None:
            return failure
    return None


def await_expectations(step: Step, scope: Scope, observer: Observer, timeout: float) -> str | None:
    instances: Sequence[str] = sorted({i for c in step.commands if (i := instance_of(c, scope)) is not None})
    findings = observer.until(lambda: observer.check(scope.namespace, step.asserts, step.errors, instances), timeout)
    if not findings:
        return None
    lines = [line for finding in findings for line in finding.lines()]
    return f"not as expected after {seconds_text(step.timeout)}:\n" + "\n".join(lines)
