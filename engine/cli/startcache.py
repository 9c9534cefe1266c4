"""What loading a command's modules compiles, kept from one run of the command to the next, as Python keeps the
modules' bytecode.

Besides running their bytecode, the imports of `kplan run` compile ~130 regular expressions at module level (urllib3's
URL and IPv6 patterns, PyYAML's, Jinja2's lexer, kplan's own) and ~470 methods for the ~80 dataclasses they define
(dataclasses writes each `__init__`, `__repr__`, `__eq__`, ... as source text and compiles it): 40 % of the
instructions of the command's start-up, the same work in every process. While a command's modules load, both go
through this cache: a regular expression is made from its compiled form (`_sre.compile` with the code the re
compiler made for the same pattern and flags), a dataclass method from the code object compiled from the same
source text. What is made is what the re compiler and `compile()` make; only the compiling is skipped.

One file per command, under ~/.cache/kplan/startup (XDG_CACHE_HOME when set), named for the interpreter's bytecode
tag and keyed inside by its exact version; it holds what the last start-up of that command used, and is written
only when a start-up used something else than it holds, never when Python is told not to write bytecode
(-B, PYTHONDONTWRITEBYTECODE). A file of another version, another user or unreadable is ignored. Only what is
compiled while the modules load goes through it: patterns a template passes later never reach it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import marshal
import os
import re
import sys
from pathlib import Path
from re import _compiler, _parser  # type: ignore[attr-defined]
from typing import Any

__all__ = ["StartCache", "directory", "start"]

Regex = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]  # _sre.compile's arguments after pattern
_real_regex_compile = _compiler.compile
MIRRORED = {(3, 11)}  # the CPython versions whose re compiler `regex_arguments` follows step by step


def directory() -> Path | None:
    """Where the stores are; None when there is no cache folder nor home to put one in."""
    try:
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kplan" / "startup"
    except RuntimeError:  # no HOME and no password entry
        return None


def start(command: str) -> StartCache | None:
    """The cache of `command`'s start-up, in use until its `stop()`; None when there is nowhere to keep it."""
    folder = directory()
    if folder is None or sys.implementation.name != "cpython" or sys.version_info[:2] not in MIRRORED:
        return None
    cache = StartCache(folder / f"{command}.{sys.implementation.cache_tag}.marshal")
    cache.start()
    return cache


class StartCache:
    """Compiles regular expressions and dataclass methods from `path`'s store while started."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stored_regexes: dict[tuple[str | bytes, int], Regex] = {}
        self.stored_codes: dict[str, Any] = {}
        self.regexes: dict[tuple[str | bytes, int], Regex] = {}  # what this start-up used
        self.codes: dict[str, Any] = {}
        self.missed = 0
        self.started = False

    def start(self) -> None:
        self.stored_regexes, self.stored_codes = read(self.path)
        _compiler.compile = self.compile_regex
        dataclasses.exec = self.exec  # type: ignore[attr-defined]  # shadows the builtin for dataclasses alone
        self.started = True

    def stop(self) -> None:
        """Compile as usual again; write what this start-up used when it differs from the store (something was
        compiled that the store lacked, or the store holds what the command's modules no longer compile)."""
        if not self.started:
            return
        self.started = False
        if _compiler.compile == self.compile_regex:
            _compiler.compile = _real_regex_compile
        if vars(dataclasses).get("exec") == self.exec:
            del dataclasses.exec  # type: ignore[attr-defined]
        unused = len(self.stored_regexes) + len(self.stored_codes) > len(self.regexes) + len(self.codes) - self.missed
        if (self.missed or unused) and not sys.dont_write_bytecode:
            write(self.path, self.regexes, self.codes)

    def compile_regex(self, pattern: Any, flags: int = 0) -> Any:
        """re's compile step: what `re._compiler.compile` returns, from the store when it holds the pattern."""
        if not isinstance(pattern, str | bytes) or flags & re.DEBUG:
            return _real_regex_compile(pattern, flags)
        key = (pattern, int(flags))
        found = self.stored_regexes.get(key)
        if found is None:
            found = regex_arguments(pattern, int(flags))
            self.missed += 1
        self.regexes[key] = found
        return _compiler._sre.compile(pattern, *found)

    def exec(self, source: Any, globals_: Any = None, locals_: Any = None) -> None:
        """`exec` as dataclasses calls it with a method's source: the code from the store when it holds the text."""
        if not isinstance(source, str):
            exec(source, globals_, locals_)
            return
        code = self.stored_codes.get(source)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)  # as exec(source) compiles it there
            self.missed += 1
        self.codes[source] = code
        exec(code, globals_, locals_)


def regex_arguments(pattern: str | bytes, flags: int) -> Regex:
    """What `re._compiler.compile(pattern, flags)` hands `_sre.compile` after the pattern, as plain values."""
    parsed = _parser.parse(pattern, flags)
    code = _compiler._code(parsed, flags)
    index: dict[str, int] = dict(parsed.state.groupdict)
    names: list[str | None] = [None] * parsed.state.groups
    for name, number in index.items():
        names[number] = name
    return int(flags | parsed.state.flags), [int(op) for op in code], parsed.state.groups - 1, index, tuple(names)


def stamp() -> tuple[str, int]:
    """What the stored forms depend on: the interpreter's exact version and its regular expression engine's."""
    return sys.version, int(_compiler._sre.MAGIC)


def read(path: Path) -> tuple[dict[tuple[str | bytes, int], Regex], dict[str, Any]]:
    """The store at `path`, or nothing when it is missing, unreadable, another user's or of another interpreter."""
    try:
        with path.open("rb") as file:
            if os.fstat(file.fileno()).st_uid != os.getuid():
                return {}, {}
            stored = marshal.loads(file.read())  # marshal.load reads a file a few bytes at a time
    except (OSError, EOFError, ValueError, TypeError):
        return {}, {}
    if not isinstance(stored, tuple) or len(stored) != 3 or stored[0] != stamp():
        return {}, {}
    regexes, codes = stored[1], stored[2]
    if not isinstance(regexes, dict) or not isinstance(codes, dict):
        return {}, {}
    return regexes, codes


def write(path: Path, regexes: dict[tuple[str | bytes, int], Regex], codes: dict[str, Any]) -> None:
    """Replace the store at `path` at once (a reader sees the old one or the new one); nothing when it cannot be."""
    partial = path.with_name(f"{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(marshal.dumps((stamp(), regexes, codes)))
        os.replace(partial, path)
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
