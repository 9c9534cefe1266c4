"""The syntax tree of a Go text/template, as `engine.kudo.parser` builds it."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "Action", "Bool", "Chain", "Command", "Comment", "Dot", "Field", "Identifier", "If", "Nil", "Node",
    "Number", "Operand", "Pipeline", "Range", "String", "Text", "Unsupported", "Variable", "With",
]


@dataclass(frozen=True)
class Dot:
    """`.`"""


@dataclass(frozen=True)
class Field:
    """`.A.B`: fields of dot."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class Variable:
    """`$x.A.B` (`$` alone is the template's root data)."""

    name: str
    fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class Identifier:
    """A function name."""

    name: str


@dataclass(frozen=True)
class String:
    value: str


@dataclass(frozen=True)
class Number:
    value: int | float
    text: str


@dataclass(frozen=True)
class Bool:
    value: bool


@dataclass(frozen=True)
class Nil:
    """`nil`"""


@dataclass(frozen=True)
class Chain:
    """`(pipeline).A.B`: fields of a parenthesized pipeline."""

    node: Pipeline
    fields: tuple[str, ...]


Operand = object  # Dot | Field | Variable | Identifier | String | Number | Bool | Nil | Chain | Pipeline


@dataclass(frozen=True)
class Command:
    """One stage of a pipeline: a function with its arguments, or a single value."""

    args: tuple[object, ...]


@dataclass(frozen=True)
class Pipeline:
    """`$a, $b := cmd | cmd`; `assign` is True for `=` (an existing variable), False for `:=`."""

    line: int
    commands: tuple[Command, ...]
    variables: tuple[str, ...] = ()
    assign: bool = False


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Comment:
    line: int


@dataclass(frozen=True)
class Action:
    """`{{ pipeline }}`: prints the value unless the pipeline declares or assigns a variable."""

    pipe: Pipeline


@dataclass(frozen=True)
class If:
    pipe: Pipeline
    body: tuple[object, ...]
    orelse: tuple[object, ...] | None = None


@dataclass(frozen=True)
class With:
    pipe: Pipeline
    body: tuple[object, ...]
    orelse: tuple[object, ...] | None = None


@dataclass(frozen=True)
class Range:
    pipe: Pipeline
    body: tuple[object, ...]
    orelse: tuple[object, ...] | None = None


@dataclass(frozen=True)
class Unsupported:
    """A construct kplan does not translate (`define`, `template`, `block`, `break`, `continue`)."""

    line: int
    construct: str
    body: tuple[object, ...] = field(default=())


Node = Text | Comment | Action | If | With | Range | Unsupported
