"""The exceptions kplan raises, in two families: permanent (record and stop) and transient (retry).

    KplanError
    ├── PermanentError                 the same input fails the same way again: record, stop
    │   ├── PackageInvalid             a package failed verification (carries every Problem)
    │   ├── ParameterInvalid           a parameter value is of the wrong type, out of bounds, ...
    │   │   └── RequiredParametersMissing  required parameters have no value (names every one)
    │   ├── ImmutableParameterChanged  an immutable parameter was given a new value
    │   ├── RenderError                a template did not render (file, line, name)
    │   ├── CycleError                 dependsOn edges form a cycle (carries the cycle)
    │   ├── PlanNotFound               a plan is named that the package does not have
    │   ├── UpgradeRefused             the target version may not upgrade from the current one
    │   └── FieldConflict              server-side apply conflict and force is off
    └── TransientError                 may succeed later: retry with backoff
        ├── ApiUnavailable             the API server failed or did not answer
        └── Timeout                    a wait ran out of time

Every error's str() is one sentence meant for a person; the CLI prints it as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import total_ordering

__all__ = [
    "ApiUnavailable",
    "CycleError",
    "FieldConflict",
    "ImmutableParameterChanged",
    "KplanError",
    "PackageInvalid",
    "ParameterInvalid",
    "PermanentError",
    "PlanNotFound",
    "Problem",
    "RenderError",
    "RequiredParametersMissing",
    "Timeout",
    "TransientError",
    "UpgradeRefused",
]


class KplanError(Exception):
    """Base of every error kplan raises on purpose."""

    attempts = 1  # of the request that ended with it, when it was sent again by the retry rules


class PermanentError(KplanError):
    """Retrying with the same input cannot help."""


class TransientError(KplanError):
    """Retrying later may help."""


@total_ordering
@dataclass(frozen=True)
class Problem:
    """One finding of package verification, located as precisely as the source allows.

    Problems sort by file, then line (findings about a whole file, line None, first), field, message.
    """

    file: str
    line: int | None
    field: str
    message: str
    warning: bool = False

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Problem):
            return NotImplemented
        return self._order() < other._order()

    def _order(self) -> tuple[str, int, str, str, bool]:
        return (self.file, -1 if self.line is None else self.line, self.field, self.message, self.warning)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        field = f" {self.field}:" if self.field else ""
        kind = "warning" if self.warning else "error"
        return f"{where}:{field} {self.message} ({kind})"


class PackageInvalid(PermanentError):
    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(sorted(problems))
        errors = [p for p in self.problems if not p.warning]
        first = errors[0] if errors else (self.problems[0] if self.problems else None)
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(f"package is invalid: {first}{more}" if first else "package is invalid")


class ParameterInvalid(PermanentError):
    def __init__(self, name: str, reason: str) -> None:
        self.name, self.reason = name, reason
        super().__init__(f"parameter {name!r} {reason}")


class RequiredParametersMissing(ParameterInvalid):
    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        if len(self.names) == 1:
            super().__init__(self.names[0], "is required and has no default")
            return
        listed = ", ".join(repr(n) for n in self.names)
        self.name, self.reason = self.names[0], "is required and has no default"
        PermanentError.__init__(self, f"parameters {listed} are required and have no default")


class ImmutableParameterChanged(PermanentError):
    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"parameter {name!r} is immutable and cannot be changed after install")


class RenderError(PermanentError):
    def __init__(self, file: str, line: int | None, reason: str) -> None:
        self.file, self.line, self.reason = file, line, reason
        where = f"{file}:{line}" if line is not None else file
        super().__init__(f"template {where}: {reason}")


class CycleError(PermanentError):
    def __init__(self, plan: str, cycle: Sequence[str]) -> None:
        self.plan, self.cycle = plan, tuple(cycle)
        path = " -> ".join([*self.cycle, self.cycle[0]]) if self.cycle else ""
        super().__init__(f"plan {plan!r} has a dependency cycle: {path}")


class PlanNotFound(PermanentError):
    def __init__(self, plan: str) -> None:
        self.plan = plan
        super().__init__(f"the package has no plan named {plan!r}")


class UpgradeRefused(PermanentError):
    pass


class FieldConflict(PermanentError):
    """Server-side apply found fields owned by other managers; `conflicts` is (manager, field)."""

    def __init__(self, obj: str, conflicts: Sequence[tuple[str, str]], message: str) -> None:
        self.obj, self.conflicts = obj, tuple(conflicts)
        super().__init__(f"{obj}: {message}")


class ApiUnavailable(TransientError):
    pass


class Timeout(TransientError):
    pass
