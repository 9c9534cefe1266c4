"""One `kplan test` run: read the package and its tests, choose the cluster (a local one by default), run them."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from engine.kube import connect
from engine.package import loader
from engine.testing.cluster import LocalCluster
from engine.testing.commands import CliRunner
from engine.testing.loading import load_suite
from engine.testing.model import Suite
from engine.testing.report import Printer
from engine.testing.results import SuiteResult
from engine.testing.running import Run, run_suite

__all__ = ["read_suite", "run_package_tests"]


def read_suite(source: str, cases: Sequence[str] = ()) -> Suite:
    """The verified package's tests (folder, .tgz or URL), only the named cases when given."""
    files = loader.read_files(source)
    pkg = loader.from_files(files, source)
    return load_suite(files, pkg.name, pkg.name, cases)


def run_package_tests(source: str, cli: CliRunner, out: TextIO, *, cases: Sequence[str] = (),
                 kubeconfig: str | None = None, context: str | None = None, backend: str = "dev") -> SuiteResult:
    """Run the package's tests against the cluster of `kubeconfig`/`context` (where a manager must run), or, when
    neither is given, against a local cluster of `backend` (dev or real) with simulators and a manager started in
    this process."""
    suite = read_suite(source, cases)
    printer = Printer(out)
    with tempfile.TemporaryDirectory(prefix="kplan-test-") as folder:
        scratch = Path(folder)
        if kubeconfig is None and context is None:
            with LocalCluster(suite.nodes, scratch, backend=backend) as local:
                return run_on(suite, Run(source, ("--kubeconfig", str(local.kubeconfig)), scratch, True),
                              str(local.kubeconfig), None, cli, printer)
        connection = connection_flags(kubeconfig, context)
        return run_on(suite, Run(source, connection, scratch, False), kubeconfig, context, cli, printer)


def connection_flags(kubeconfig: str | None, context: str | None) -> tuple[str, ...]:
    return (*(("--kubeconfig", kubeconfig) if kubeconfig else ()), *(("--context", context) if context else ()))


def run_on(suite: Suite, run: Run, kubeconfig: str | None, context: str | None, cli: CliRunner,
           printer: Printer) -> SuiteResult:
    with connect(kubeconfig, context) as kube:
        return run_suite(suite, run, kube, cli, printer)
