"""Entry point: global flags, command registry, and the one place errors become exit codes.

Exit codes: 0 success, 1 failure (one sentence on stderr, never a traceback), 2 usage error.
Each command module exposes `register(subparsers, parents)` and sets `func(args) -> int`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from engine import __version__
from engine.errors import KplanError

# Command modules under engine.cli, in the order `kplan --help` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "init",
    "install",
    "instances",
    "plan",
    "get",
    "diff",
    "run",
    "template",
    "package",
    "devcluster",
    "manager",
    "test",
)


def global_flags(default: object = None) -> argparse.ArgumentParser:
    """Flags every command accepts, like kubectl's. Commands get them with `default=argparse.SUPPRESS`, so
    that `kplan -n shop install ...` keeps the namespace given before the command."""
    flags = argparse.ArgumentParser(add_help=False, argument_default=default)
    flags.add_argument("--kubeconfig", help="path to the kubeconfig file")
    flags.add_argument("--context", help="the kubeconfig context to use")
    flags.add_argument("-n", "--namespace", help="namespace of the Instance (default: the context's, else 'default')")
    flags.add_argument(
        "-o", "--output", choices=("table", "yaml", "json", "dot", "mermaid", "text", "junit"),
        help="output format (commands accept the ones that make sense for them)",
    )
    return flags


def build_parser() -> argparse.ArgumentParser:
    parents = [global_flags(argparse.SUPPRESS)]
    parser = argparse.ArgumentParser(
        prog="kplan", description="Declarative operators for Kubernetes.", parents=[global_flags()]
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    version = sub.add_parser("version", help="print the kplan version", parents=parents)
    version.set_defaults(func=lambda _args: print(f"kplan {__version__}") or 0)
    for name in COMMAND_MODULES:
        importlib.import_module(f"engine.cli.{name}").register(sub, parents)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except KplanError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
