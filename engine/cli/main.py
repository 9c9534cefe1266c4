"""Entry point: global flags, command registry, and the one place errors become exit codes.

Exit codes: 0 success, 1 failure (one sentence on stderr, never a traceback), 2 usage error.
Each command module exposes `register(subparsers, parents)` and sets `func(args) -> int`.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import NoReturn

from engine import __version__
from engine.cli import leannetworkx, startcache
from engine.errors import KplanError

# Command -> the module under engine.cli that registers it, in the order `kplan --help` lists them.
# Only the module of the command being run is imported, so `kplan version` does not load the Kubernetes client.
COMMANDS: dict[str, str] = {
    "init": "init",
    "install": "install",
    "update": "instances",
    "upgrade": "instances",
    "rollback": "instances",
    "uninstall": "instances",
    "plan": "plan",
    "get": "get",
    "diff": "diff",
    "run": "run",
    "template": "template",
    "package": "package",
    "repo": "repo",
    "search": "search",
    "devcluster": "devcluster",
    "manager": "manager",
    "test": "test",
}
COMMAND_MODULES: tuple[str, ...] = tuple(dict.fromkeys(COMMANDS.values()))


def global_flags(default: object = None) -> argparse.ArgumentParser:
    """Flags every command accepts, like kubectl's. Commands get them with `default=argparse.SUPPRESS`, so
    that `kplan -n shop install ...` keeps the namespace given before the command."""
    flags = argparse.ArgumentParser(add_help=False, argument_default=default)
    flags.add_argument("--kubeconfig", help="path to the kubeconfig file")
    flags.add_argument("--context", help="the kubeconfig context to use")
    flags.add_argument("-n", "--namespace", help="namespace of the Instance (default: the context's, else 'default')")
    flags.add_argument(
        "-o", "--output", choices=("table", "wide", "yaml", "json", "dot", "mermaid", "text", "junit"),
        help="output format (commands accept the ones that make sense for them)",
    )
    flags.add_argument("--kudo-repo", metavar="DIR", help="where KudoOperator tasks of KUDO packages find their "
                       "packages (as DIR/NAME/operator, DIR/NAME or by name), besides the parent's folder")
    return flags


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser for `command` alone when it is known, else for every command (help, usage errors)."""
    parents = [global_flags(argparse.SUPPRESS)]
    parser = argparse.ArgumentParser(
        prog="kplan", description="Declarative operators for Kubernetes.", parents=[global_flags()]
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    version = sub.add_parser("version", help="print the kplan version", parents=parents)
    version.set_defaults(func=lambda _args: print(f"kplan {__version__}") or 0)
    if command == "version":
        modules: tuple[str, ...] = ()
    else:
        modules = (COMMANDS[command],) if command in COMMANDS else COMMAND_MODULES
    for name in modules:
        importlib.import_module(f"engine.cli.{name}").register(sub, parents)
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The command word of `argv`, skipping the global flags and their values before it."""
    _, rest = global_flags().parse_known_args(argv)
    return next((word for word in rest if not word.startswith("-")), None)


def entry() -> NoReturn:
    """The `kplan` console script: `main()`, then the process ends as soon as its work is done.

    The interpreter's own shutdown tears down every module and object one by one — 0.1-0.4 s after a command
    that loaded the client and the engine, a third of a short command. Here what that shutdown does for the
    program still happens (threads that are not daemons are joined, atexit handlers run: the kubeconfig loader
    removes its temporary certificate files there, logging flushes; the standard streams are flushed; a
    stdout that cannot be flushed ends with 120, as Python does), and then the process exits at once.

    The cyclic garbage collector is off while the command's modules load (`loaded`): they make some 90,000
    objects that live as long as the process and hardly any garbage, and collections walked them again and
    again (4 % of the instructions of `kplan run`'s imports, ~10 % of their CPU time). Then they are frozen out
    of every later collection, and collecting goes on as usual: the pattern `gc.freeze` documents. networkx is
    imported without the algorithms kplan does not use (engine.cli.leannetworkx); the regular expressions and
    dataclass methods the modules compile come from the last start-up of the same command (engine.cli.startcache)."""
    leannetworkx.install()
    command = command_of(sys.argv[1:])
    cache = startcache.start(command) if command in COMMANDS or command == "version" else None
    gc.disable()

    def loaded() -> None:
        if cache is not None:
            cache.stop()
        freeze_start_up()

    try:
        code = main(loaded=loaded)
    except SystemExit as exit_:  # argparse: --help, usage errors
        if not isinstance(exit_.code, int | None):
            raise
        code = exit_.code or 0
    finally:
        if cache is not None:
            cache.stop()  # when the command ended before its modules were loaded
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed, or its reader went away
            code = 120 if stream is sys.stdout else code
    os._exit(code)


def freeze_start_up() -> None:
    """The command's modules are loaded: what exists now is left out of later collections, which start again."""
    gc.freeze()
    gc.enable()


def main(argv: Sequence[str] | None = None, *, loaded: Callable[[], None] = lambda: None) -> int:
    """Run the command of `argv` (default: the process's); its exit code. `loaded` is called once the command's
    modules are imported."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(command_of(argv))
    loaded()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    refused = refused_output(args)
    if refused:
        print(f"error: {refused}", file=sys.stderr)
        return 2
    try:
        set_kudo_repository(getattr(args, "kudo_repo", None) or os.environ.get("KPLAN_KUDO_REPO"))
        return int(args.func(args) or 0)
    except KplanError as e:
        return fail(str(e))
    except OSError as e:  # files and folders given on the command line
        return fail(f"{e.strerror or e}: {e.filename}" if e.filename else str(e.strerror or e))
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug: still one sentence, the traceback only when asked for
        if os.environ.get("KPLAN_DEBUG"):
            raise
        return fail(f"unexpected {type(e).__name__}: {e} (set KPLAN_DEBUG=1 to see where)")


def set_kudo_repository(folder: str | None) -> None:
    """Tell the KUDO support where --kudo-repo points; it is imported for this only when a folder is given or
    it is loaded already (`kplan version` and other commands that read no package do not pay for it)."""
    if folder or "engine.cli.kudo" in sys.modules:
        from engine.cli import kudo

        kudo.set_repository(folder)


def refused_output(args: argparse.Namespace) -> str | None:
    """Why `-o FORMAT` does not fit the command (a usage error), or None; commands declare their formats with
    `flags.accepts_output`."""
    formats: tuple[str, ...] = getattr(args, "output_formats", ())
    given = getattr(args, "output", None)
    if given is None or given in formats:
        return None
    command = " ".join(w for w in (args.command, getattr(args, "plan_command", None),
                                   getattr(args, "package_command", None), getattr(args, "repo_command", None)) if w)
    prints = f"it prints {', '.join(formats)}" if formats else "it has no other output format"
    return f"{command} does not take -o {given} ({prints})"


def fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    entry()
