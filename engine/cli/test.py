"""`kplan test PKG`: run the package's declarative tests (tests/CASE/NN-*.yaml) on a dev cluster or any cluster."""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from engine.cli import flags
from engine.errors import PermanentError
from engine.testing import junit_xml, run_package_tests

__all__ = ["register", "run", "run_kplan"]

FORMATS = ("text", "junit")


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "test", parents=parents, help="run a package's tests (default: on a dev cluster started here)",
        description="Run the cases under PKG/tests/ (numbered steps, asserts and errors; see docs/authoring.md). "
                    "Without --kubeconfig or --context, a dev cluster with simulators and a manager run in this "
                    "process; otherwise a manager must already run in that cluster.",
    )
    parser.add_argument("package", metavar="PKG", help="package folder, .tgz or URL")
    parser.add_argument("--case", action="append", default=[], metavar="NAME",
                        help="run only this case (repeatable)")
    parser.add_argument("--junit-file", metavar="FILE", help="also write the results as JUnit XML to FILE")
    parser.add_argument("--backend", choices=("dev", "real"), default="dev",
                        help="the local cluster to start when no --kubeconfig/--context is given: dev (default) or "
                             "real (the real control plane; `make control-plane` builds it)")
    flags.accepts_output(parser, *FORMATS)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    fmt = args.output or "text"
    xml_to_stdout = fmt == "junit" and not args.junit_file
    result = run_package_tests(args.package, run_kplan, sys.stderr if xml_to_stdout else sys.stdout,
                               cases=args.case, kubeconfig=args.kubeconfig, context=args.context,
                               backend=args.backend)
    if fmt == "junit" or args.junit_file:
        xml = junit_xml(result)
        if args.junit_file:
            write(Path(args.junit_file), xml)
        else:
            sys.stdout.write(xml)
    return 0 if result.failed == 0 else 1


def write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise PermanentError(f"cannot write the JUnit file {path}: {err.strerror or err}") from None


def run_kplan(argv: Sequence[str]) -> tuple[int, str]:
    """Run a kplan command in this process as a user would from the shell: (exit code, what it printed)."""
    from engine.cli.main import main  # main imports the command modules, this one among them

    printed = io.StringIO()
    with redirect_stdout(printed), redirect_stderr(printed):
        try:
            code = main(list(argv))
        except SystemExit as stop:  # argparse's usage errors
            code = stop.code if isinstance(stop.code, int) else 2
    return code, printed.getvalue()
