"""CEL expressions with the Kubernetes extensions: CRD validation rules and package health rules (pure)."""

from __future__ import annotations

from collections.abc import Mapping

from engine.cel.fields import Schema, chain_type, field_errors, render, resource_root
from engine.cel.programs import CelError, CompileError, EvalError, Program, compile_expression
from engine.cel.values import to_cel

__all__ = [
    "CelError",
    "CompileError",
    "EvalError",
    "Program",
    "compile_checked",
    "resource_root",
    "result_type",
    "to_cel",
]


def compile_checked(source: str, variables: Mapping[str, Schema | None], *, bindings: bool = True) -> Program:
    """Compile with these variables, and check their field selections where a variable's schema is given
    (`bindings=False`: no `cel.bind`, as in CRD validation rules)."""
    program = compile_expression(source, tuple(sorted(variables)), bindings=bindings)
    problems = field_errors(source, variables)
    if problems:
        raise CompileError(render(source, problems))
    return program


def result_type(program: Program, variables: Mapping[str, Schema | None]) -> str:
    """The checker's result type, sharpened by the schema when the expression is one selection chain."""
    if program.result_type != "dyn":
        return program.result_type
    kind = chain_type(program.source, variables)
    return {"integer": "int", "number": "double", "boolean": "bool", "object": "map", "array": "list"}.get(
        kind or "", kind or "dyn")
