"""What a package test is made of: a suite of cases, each a list of numbered steps (DESIGN §8)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["DEFAULT_TIMEOUT", "Case", "Command", "Expectation", "Node", "Step", "Suite", "Verb"]

DEFAULT_TIMEOUT = 30.0  # seconds a step may take to reach its assertions

Json = Mapping[str, Any]


class Verb(StrEnum):
    INSTALL = "install"
    UPDATE = "update"
    UPGRADE = "upgrade"
    TRIGGER = "trigger"
    UNINSTALL = "uninstall"
    LABEL = "label"
    DELETE = "delete"
    KPLAN = "kplan"


@dataclass(frozen=True)
class Command:
    """One command of a TestStep; which fields count depends on `verb` (see docs/authoring.md).

    `expect_failure`: False, True (the command must fail) or a text its output must contain when it fails.
    """

    verb: Verb
    where: str
    instance: str = ""
    package: str = ""
    parameters: Json = field(default_factory=dict)
    plan: str = ""
    node: str = ""
    labels: Json = field(default_factory=dict)
    target: Json = field(default_factory=dict)
    args: tuple[str, ...] = ()
    expect_failure: bool | str = False


@dataclass(frozen=True)
class Expectation:
    """An object of an assert or errors file: the fields to match; `source` is `01-assert.yaml#2`."""

    fields: Json
    source: str

    @property
    def api_version(self) -> str:
        return str(self.fields.get("apiVersion") or "")

    @property
    def kind(self) -> str:
        return str(self.fields.get("kind") or "")

    @property
    def name(self) -> str | None:
        """The object's name when the expectation gives it as text (a pattern matches against every object)."""
        value = (self.fields.get("metadata") or {}).get("name")
        return value if isinstance(value, str) and value else None

    @property
    def namespace(self) -> str | None:
        value = (self.fields.get("metadata") or {}).get("namespace")
        return value if isinstance(value, str) and value else None


@dataclass(frozen=True)
class Step:
    """`NN-<name>.yaml` and its `NN-assert.yaml` / `NN-errors.yaml`, run in the order of NN."""

    index: int
    name: str
    timeout: float
    commands: tuple[Command, ...] = ()
    objects: tuple[Json, ...] = ()
    asserts: tuple[Expectation, ...] = ()
    errors: tuple[Expectation, ...] = ()

    @property
    def title(self) -> str:
        return f"{self.index:02d}-{self.name}"


@dataclass(frozen=True)
class Case:
    """A folder under the package's tests/: its steps run in order, in a namespace of its own."""

    name: str
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Node:
    """A node the suite needs, with the labels every case starts with."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Suite:
    """The tests of one package: `instance` is the default Instance name (the package's name)."""

    package: str
    instance: str
    cases: tuple[Case, ...]
    nodes: tuple[Node, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
