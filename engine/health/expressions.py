"""Health by a package's CEL expressions over the object, the way Flux's healthCheckExprs work.

`inProgress` is tried first, then `failed`, then `current`; when none is true the object is progressing. A field
the object does not have yet (`no such key`) makes an expression false, so `self.status.phase == 'Running'`
needs no `has()` guard; any other evaluation error is the rule's fault and fails the object.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from engine.health.jsonpath import InvalidRule
from engine.health.objects import Obj
from engine.health.verdicts import Status, failed, healthy, progressing, stale
from engine.model import HealthExprs

if TYPE_CHECKING:
    from engine import cel

__all__ = ["VARIABLES", "judge_exprs"]

VARIABLES = ("self",)


def judge_exprs(obj: Obj, exprs: HealthExprs) -> Status:
    """The verdict of one rule's expressions (raises InvalidRule when one cannot be compiled or evaluated)."""
    if waiting := stale(obj, strict=False):
        return waiting
    if exprs.in_progress and holds(obj, exprs.in_progress):
        return progressing(obj, f"in progress ({exprs.in_progress})")
    if exprs.failed and holds(obj, exprs.failed):
        return failed(obj, exprs.failed)
    if holds(obj, exprs.current):
        return healthy(obj, exprs.current)
    return progressing(obj, f"waiting for {exprs.current}")


@functools.lru_cache(maxsize=1024)
def _program(expression: str) -> cel.Program:
    from engine import cel  # only for packages with expressions: CEL's import is ~3 % of a command's start-up

    return cel.compile_checked(expression, {"self": None})


def holds(obj: Obj, expression: str) -> bool:
    """Whether the expression is true of the object; false while a field it reads is missing."""
    from engine import cel

    try:
        value = _program(expression).evaluate({"self": obj})
    except cel.EvalError as err:
        if str(err).startswith("no such key"):
            return False
        raise InvalidRule(f"{expression}: {err}") from err
    except cel.CompileError as err:
        raise InvalidRule(f"{expression}: {err}") from err
    if not isinstance(value, bool):
        raise InvalidRule(f"{expression}: must evaluate to a bool, got {type(value).__name__}")
    return value
