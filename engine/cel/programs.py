"""Compiling and evaluating CEL expressions, with errors worded the way cel-go (and so the API server) words them.

One environment per set of variable names (all dynamically typed), with what kube-apiserver offers: the strings
(version 2), optional and bindings extensions of CEL and the Kubernetes libraries of `engine.cel.library` and
`engine.cel.extras` (no math extension: the API server has none). Programs are compiled once and cached;
evaluation is a pure function of the values given.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_optional, ext_strings

from engine.cel import extras, library

__all__ = ["CelError", "CompileError", "EvalError", "Program", "compile_expression", "references"]

_STATUS = re.compile(r"^[A-Z_]+: ")
_STATUS_TAIL = re.compile(r" \[[A-Z_]+\]$")
_GO_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r'^Key not found in map : "(.*)"$', re.S), r"no such key: \1"),
    # (object data: the API server's unstructured lists say so; cel-go's literal lists would not)
    (re.compile(r"^Index error: index=(-?\d+) size=(\d+)$"), r"index out of bounds: \1"),
    (re.compile(r"^divide by zero$"), "division by zero"),
    (re.compile(r"^No matching overloads found.*$", re.S), "no such overload"),
)
# String literals (raw, triple-quoted, plain), blanked before looking for identifiers.
_NO_OVERLOAD = re.compile(r"<input>:(\d+):(\d+): found no matching overload for '([\w.]+)' applied to '\((.*)\)'")
_LOCATION = re.compile(r"ERROR: <input>:(\d+):(\d+):")
_STRINGS = re.compile(r"""[rR]?(?:'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")""", re.S)
_IDENT = re.compile(r"(?<![\w.])[A-Za-z_][A-Za-z0-9_]*")


class CelError(ValueError):
    """A CEL expression that does not compile or does not evaluate; the message reads like cel-go's."""


class CompileError(CelError):
    """Parse or check errors: `ERROR: <input>:L:C: ...` lines with the source snippet under each."""


class EvalError(CelError):
    """A runtime error (`no such key: x`, `division by zero`, ...)."""


@dataclass(frozen=True, eq=False)
class Program:
    """A checked expression and what it needs."""

    source: str
    expression: Any
    result_type: str
    variables: frozenset[str]

    def evaluate(self, values: Mapping[str, Any]) -> Any:
        """The plain Python value of the expression (raises EvalError)."""
        try:
            result = self.expression.eval(data=dict(values))
        except Exception as e:  # the runtime raises bare RuntimeErrors
            raise EvalError(go_words(str(e))) from e
        if result.type().name() == "ERROR":
            raise EvalError(go_words(str(result.value())))
        return result.plain_value()


def go_words(message: str) -> str:
    """cel-go's wording of a cel-cpp runtime error."""
    message = _STATUS_TAIL.sub("", _STATUS.sub("", message.strip(), count=1))
    for pattern, words in _GO_WORDS:
        if pattern.match(message):
            return pattern.sub(words, message)
    return message


def _by_location(message: str) -> str:
    """cel-go lists a compilation's errors in source order; cel-cpp in the order its passes found them."""
    blocks = re.split(r"\n(?=ERROR: <input>:)", message)
    located = [(tuple(int(n) for n in found.groups()) if (found := _LOCATION.match(b)) else (0, 0), i, b)
               for i, b in enumerate(blocks)]
    return "\n".join(b for _, _, b in sorted(located))


def _overload_words(source: str, found: re.Match[str]) -> str:
    """cel-go names a member call's arguments `receiver.(args)`; cel-cpp lists them all as `(receiver, args)`."""
    line, column, name, args = int(found.group(1)), int(found.group(2)), found.group(3), found.group(4)
    text = source.splitlines()[line - 1] if line <= len(source.splitlines()) else ""
    start = column - 1 - len(name)
    if start > 0 and text[start - 1:start] == "." and text[start:column - 1] == name:
        receiver, _, rest = args.partition(", ")
        args = f"{receiver}.({rest})"
    else:
        args = f"({args})"
    return f"<input>:{line}:{column}: found no matching overload for '{name}' applied to '{args}'"


def references(source: str) -> frozenset[str]:
    """Identifiers the expression names outside string literals and after no dot (variables, functions)."""
    return frozenset(_IDENT.findall(blank_strings(source)))


def blank_strings(source: str) -> str:
    """The source with every string literal replaced by spaces of the same length (offsets kept)."""
    return _STRINGS.sub(lambda m: " " * len(m.group(0)), source)


@functools.cache
def _environment(variables: tuple[str, ...], bindings: bool) -> Any:
    binding = [ext_bindings.ExtBindings()] if bindings else []
    return cel.NewEnv(variables={name: cel.Type.DYN for name in variables},
                      extensions=[ext_strings.ExtStrings(version=2), ext_optional.ExtOptional(), *binding,
                                  extras.extension()],
                      functions=library.declarations())


@functools.lru_cache(maxsize=4096)
def compile_expression(source: str, variables: tuple[str, ...], *, bindings: bool = True) -> Program:
    """Parse and check `source` with the given (dynamically typed) variables; raises CompileError.
    `bindings=False`: without `cel.bind`, as kube-apiserver compiles CRD validation rules."""
    try:
        expression = _environment(tuple(sorted(variables)), bindings).compile(source)
    except Exception as e:  # the compiler raises bare RuntimeErrors
        message = _STATUS_TAIL.sub("", _STATUS.sub("", str(e).strip(), count=1))
        raise CompileError(_by_location(_NO_OVERLOAD.sub(lambda m: _overload_words(source, m), message))) from e
    result = expression.return_type().name().lower()
    return Program(source, expression, result, references(source) & frozenset(variables))
