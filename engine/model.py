"""The typed model of an operator package (operator.yaml + params.yaml + templates/).

Frozen dataclasses only: a Package is a value. The loader builds it after verification, so
code that holds a Package may assume the cross-references in it are sound (every step names
existing tasks, every task names existing templates, plans are acyclic).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any

__all__ = [
    "Expectation",
    "GenerateKind",
    "Generated",
    "HealthExprs",
    "HealthRule",
    "Maintainer",
    "Package",
    "ParamType",
    "Parameter",
    "Phase",
    "PipeFile",
    "Plan",
    "Step",
    "Strategy",
    "Task",
    "TaskKind",
    "WaitFor",
]

EMPTY: MappingProxyType[str, Any] = MappingProxyType({})


class TaskKind(StrEnum):
    APPLY = "Apply"
    DELETE = "Delete"
    TOGGLE = "Toggle"
    PIPE = "Pipe"
    OPERATOR = "Operator"
    WAIT = "Wait"
    DUMMY = "Dummy"


class Strategy(StrEnum):
    SERIAL = "serial"
    PARALLEL = "parallel"


class ParamType(StrEnum):
    STRING = "string"
    INTEGER = "integer"
    NUMBER = "number"
    BOOLEAN = "boolean"
    ARRAY = "array"
    MAP = "map"


class GenerateKind(StrEnum):
    """How a generated parameter value is made (DESIGN §2 `generate`)."""

    PASSWORD = "password"
    TOKEN = "token"
    FERNET = "fernet"
    RSA = "rsa"


@dataclass(frozen=True)
class Generated:
    """`generate: {kind, length}`: a value made once at install when none is given; `length` None: the kind's own."""

    kind: GenerateKind
    length: int | None = None


@dataclass(frozen=True)
class Maintainer:
    name: str
    email: str = ""


@dataclass(frozen=True)
class PipeFile:
    """A file a Pipe task's pod writes, stored in a ConfigMap or Secret under `key`."""

    file: str
    kind: str  # ConfigMap | Secret
    key: str


@dataclass(frozen=True)
class WaitFor:
    """`resource` is a template file name or `kind/name`; `condition` a condition type."""

    resource: str
    condition: str = "Ready"


@dataclass(frozen=True)
class Task:
    """One task; which fields matter depends on `kind` (DESIGN §2 "Tasks")."""

    name: str
    kind: TaskKind
    resources: tuple[str, ...] = ()
    force: bool = False
    retries: int = 0
    # Toggle
    parameter: str | None = None
    # Pipe
    pod: str | None = None
    pipe: tuple[PipeFile, ...] = ()
    # Operator (package, version, instanceName and parameter values are templated strings)
    package: str | None = None
    version: str | None = None
    instance_name: str | None = None
    parameters: MappingProxyType[str, Any] = field(default_factory=lambda: EMPTY)
    # Wait
    wait_for: tuple[WaitFor, ...] = ()
    timeout: float | None = None  # seconds
    # Dummy
    want_err: bool = False
    fatal: bool = False
    done: bool = True

    @property
    def templates(self) -> tuple[str, ...]:
        """Every template file this task renders."""
        files = list(self.resources)
        if self.pod:
            files.append(self.pod)
        files.extend(w.resource for w in self.wait_for if w.resource.endswith((".yaml", ".yml")))
        return tuple(dict.fromkeys(files))


@dataclass(frozen=True)
class Expectation:
    """A condition of type `condition` with `status`, or the value at `json_path` == `equals`."""

    condition: str | None = None
    status: str = "True"
    json_path: str | None = None
    equals: Any = None


@dataclass(frozen=True)
class HealthExprs:
    """CEL expressions over the object (`self`), as Flux's healthCheckExprs: `current` is required."""

    current: str
    in_progress: str | None = None
    failed: str | None = None


@dataclass(frozen=True)
class HealthRule:
    group: str
    kind: str
    healthy: Expectation | None = None
    failed: Expectation | None = None
    exprs: HealthExprs | None = None


@dataclass(frozen=True)
class Step:
    name: str
    tasks: tuple[str, ...]
    depends_on: tuple[str, ...] = ()
    timeout: float | None = None  # seconds


@dataclass(frozen=True)
class Phase:
    name: str
    steps: tuple[Step, ...]
    strategy: Strategy = Strategy.SERIAL


@dataclass(frozen=True)
class Plan:
    name: str
    phases: tuple[Phase, ...]
    strategy: Strategy = Strategy.SERIAL

    @property
    def steps(self) -> tuple[Step, ...]:
        return tuple(s for p in self.phases for s in p.steps)

    def step(self, name: str) -> Step:
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(name)


@dataclass(frozen=True)
class Parameter:
    name: str
    type: ParamType = ParamType.STRING
    description: str = ""
    default: Any = None
    has_default: bool = False
    required: bool = True
    enum: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    pattern: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    immutable: bool = False
    trigger: str | None = None  # None: "update" if the package has it, else "deploy"
    secret: bool = False  # always true for a generated parameter
    generate: Generated | None = None


@dataclass(frozen=True)
class Package:
    name: str
    operator_version: str
    tasks: tuple[Task, ...]
    plans: MappingProxyType[str, Plan]
    parameters: tuple[Parameter, ...] = ()
    templates: MappingProxyType[str, str] = field(default_factory=lambda: MappingProxyType({}))
    app_version: str | None = None
    kplan_version: str | None = None
    description: str = ""
    maintainers: tuple[Maintainer, ...] = ()
    url: str | None = None
    upgradable_from: tuple[str, ...] = ()
    health: tuple[HealthRule, ...] = ()
    # The package's files as read (path relative to the package root -> text), so the package
    # can be stored (OperatorVersion) and rebuilt exactly; empty for packages built in code.
    files: MappingProxyType[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def version_name(self) -> str:
        """Name of the OperatorVersion object: `<name>-<operatorVersion>`."""
        return f"{self.name}-{self.operator_version}"

    def task(self, name: str) -> Task:
        for t in self.tasks:
            if t.name == name:
                return t
        raise KeyError(name)

    def parameter(self, name: str) -> Parameter:
        for p in self.parameters:
            if p.name == name:
                return p
        raise KeyError(name)

    def plan(self, name: str) -> Plan:
        from engine.errors import PlanNotFound

        try:
            return self.plans[name]
        except KeyError:
            raise PlanNotFound(name) from None

    def default_trigger(self) -> str:
        return "update" if "update" in self.plans else "deploy"
