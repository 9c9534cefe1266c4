"""`kplan plan ...`: a package's or an Instance's plans. Subcommands register through SUBCOMMANDS."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from engine import graph
from engine.cli import flags, instance_plans
from engine.cli.sources import load_package

GRAPH_FORMATS = ("text", "dot", "mermaid")


def register(subparsers: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("plan", help="plans: graph, status, history, trigger", parents=parents)
    sub = parser.add_subparsers(dest="plan_command", metavar="COMMAND", required=True)
    for add in SUBCOMMANDS:
        add(sub, parents)


def add_graph(sub: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("graph", help="print a plan's step graph (-o text, dot or mermaid)", parents=parents)
    parser.add_argument("package", metavar="PKG", help="package folder, .tgz or URL")
    parser.add_argument("--plan", default="deploy", help="plan to draw (default: deploy)")
    flags.accepts_output(parser, *GRAPH_FORMATS)
    parser.set_defaults(func=run_graph)


def run_graph(args: argparse.Namespace) -> int:
    fmt = args.output or "text"
    pkg = load_package(args.package).pkg
    plan = pkg.plan(args.plan)
    title = f"{pkg.name} {pkg.operator_version} plan {plan.name}"
    draw = {"text": graph.to_text, "dot": graph.to_dot, "mermaid": graph.to_mermaid}[fmt]
    text = draw(graph.build(plan), title)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


# Each adds one `plan` subcommand.
SUBCOMMANDS: tuple[Callable[[Any, Sequence[argparse.ArgumentParser]], None], ...] = (
    add_graph, instance_plans.add_status, instance_plans.add_history, instance_plans.add_trigger,
)
