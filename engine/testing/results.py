"""What running a suite found: per step, per case and for the suite, with timings."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CaseResult", "StepResult", "SuiteResult"]


@dataclass(frozen=True)
class StepResult:
    """`failure` is the text explaining a failed step (field-level differences included), None when it passed."""

    title: str
    seconds: float
    failure: str | None = None

    @property
    def passed(self) -> bool:
        return self.failure is None


@dataclass(frozen=True)
class CaseResult:
    name: str
    namespace: str
    seconds: float
    steps: tuple[StepResult, ...]
    error: str | None = None  # the case could not run its steps (e.g. its namespace could not be created)

    @property
    def passed(self) -> bool:
        return self.error is None and all(s.passed for s in self.steps)

    @property
    def failure(self) -> str | None:
        """The first failed step's title and explanation, or the case's own error."""
        if self.error is not None:
            return self.error
        failed = next((s for s in self.steps if not s.passed), None)
        return f"step {failed.title}: {failed.failure}" if failed is not None else None


@dataclass(frozen=True)
class SuiteResult:
    package: str
    cases: tuple[CaseResult, ...]
    seconds: float
    started: str  # ISO 8601, for JUnit's timestamp

    @property
    def passed(self) -> int:
        return sum(1 for c in self.cases if c.passed)

    @property
    def failed(self) -> int:
        return len(self.cases) - self.passed
