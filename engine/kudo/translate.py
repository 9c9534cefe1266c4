"""Go text/template → Jinja2, keeping Go's semantics.

The translation walks the syntax tree of `engine.kudo.parser` and writes Jinja2 that renders
the same text for the same values:

- Text is copied as it is (Go's trim markers were applied by the lexer), with any `{{`, `{%`
  or `{#` in it escaped.
- Dot is tracked statically: at the top it is the root (`.Params.X` becomes `Params.X`), inside
  `range` and `with` it is the element (`go.field(_e1, "X")`).
- Go variables live in one Jinja2 namespace under unique names, resolved with Go's lexical
  scoping, so `$x := ...` inside an `if` shadows without leaking, `$x = ...` assigns the outer
  variable, and an assignment inside a loop survives the loop, as in Go.
- Pipelines pass the piped value as the last argument; functions become calls of `go.NAME`
  (`engine.render.gofuncs`), which behave as Go's and sprig's do. Where the types are known to
  be strings (a string parameter, a literal, `.Name`) the plain Jinja2 operation is written
  instead, since it is then the same: `eq .Params.X "true"` becomes `Params.X == "true"`.
- `range` goes through `go.range_items` (lists by position, maps in sorted key order);
  `{{ value }}` through `go.output` (Go's printing) unless the value is known to be a string or
  an integer.

What has no translation (`define`, `template`, `block`, `break`, `continue`, an unknown
function, arguments given to a non-function) is returned as a Gap with its line and becomes a
call that fails the render with that message: nothing is translated silently wrong.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from engine.kudo import nodes as n
from engine.kudo.parser import TemplateSyntaxError, parse
from engine.render.gofuncs import FUNCTIONS

__all__ = ["ROOT_NAMES", "Gap", "TemplateSyntaxError", "Translation", "jinja_string", "translate"]

ROOT_NAMES = ("Params", "Pipes", "Name", "Namespace", "OperatorName", "OperatorVersion", "AppVersion",
              "PlanName", "PhaseName", "StepName")
# result types of functions, where they are always the same
_RESULTS = {
    "int": "int", "int64": "int", "atoi": "int", "add": "int", "add1": "int", "sub": "int", "mul": "int",
    "div": "int", "mod": "int", "max": "int", "min": "int", "len": "int",
    "until": "list", "untilStep": "list", "list": "list", "splitList": "list", "keys": "list",
    "eq": "bool", "ne": "bool", "lt": "bool", "le": "bool", "gt": "bool", "ge": "bool", "not": "bool",
    "empty": "bool", "contains": "bool", "hasPrefix": "bool", "hasSuffix": "bool", "has": "bool",
    "hasKey": "bool",
    "printf": "str", "print": "str", "println": "str", "toString": "str", "trim": "str", "trimAll": "str",
    "trimPrefix": "str", "trimSuffix": "str", "indent": "str", "nindent": "str", "quote": "str",
    "squote": "str", "upper": "str", "lower": "str", "title": "str", "replace": "str", "repeat": "str",
    "trunc": "str", "join": "str", "b64enc": "str", "b64dec": "str", "sha256sum": "str", "toYaml": "str",
    "toJson": "str",
}
_OPERATORS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_PRINTS_AS_IS = frozenset({"str", "int"})
_TRUTH_AS_IS = frozenset({"str", "int", "bool", "list"})


@dataclass(frozen=True)
class Gap:
    """A construct left untranslated, at `line` of the template."""

    line: int
    construct: str
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.construct}: {self.reason}"


@dataclass(frozen=True)
class Translation:
    text: str
    gaps: tuple[Gap, ...] = ()
    functions: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _Expr:
    code: str
    type: str | None = None


class _Root:
    """The template's root data (`$`, and dot outside range/with)."""


ROOT = _Root()
_Dot = _Root | _Expr


def translate(source: str, string_params: frozenset[str] = frozenset(),
              pipes: Mapping[str, str] | None = None, structured_params: frozenset[str] = frozenset()) -> Translation:
    """The Jinja2 text of a Go template. `string_params` are the parameters known to hold strings,
    `structured_params` the array and map ones (KUDO read them through JSON: numbers are floats);
    `pipes` maps each pipe key to the name of the object holding its file (`.Pipes.KEY`)."""
    body = parse(source)
    writer = _Writer(string_params, dict(pipes or {}), structured_params)
    text = writer.block(body, ROOT)
    prelude = ""
    if writer.uses_root:
        entries = ", ".join(f"{jinja_string(name)}: {name}" for name in ROOT_NAMES)
        prelude += f"{{% set _root = {{{entries}}} %}}"
    if writer.uses_variables:
        prelude += "{% set _v = namespace() %}"
    return Translation(prelude + text, tuple(writer.gaps), frozenset(writer.functions))


def jinja_string(value: str) -> str:
    """A Jinja2 string literal for `value`."""
    out = ['"']
    for char in value:
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


_JINJA_OPENERS = re.compile(r"\{(?=[{%#]|$)")


@dataclass
class _Writer:
    string_params: frozenset[str]
    pipes: dict[str, str]
    structured_params: frozenset[str]
    gaps: list[Gap] = field(default_factory=list)
    functions: set[str] = field(default_factory=set)
    scopes: list[dict[str, str]] = field(default_factory=lambda: [{}])
    counter: int = 0
    uses_root: bool = False
    uses_variables: bool = False

    # -- statements

    def block(self, body: Sequence[object], dot: _Dot) -> str:
        return "".join(self.node(node, dot) for node in body)

    def node(self, node: object, dot: _Dot) -> str:
        if isinstance(node, n.Text):
            return _JINJA_OPENERS.sub('{{ "{" }}', node.text)
        if isinstance(node, n.Comment):
            return ""
        if isinstance(node, n.Action):
            return self.action(node.pipe, dot)
        if isinstance(node, n.If):
            return self.if_(node, dot)
        if isinstance(node, n.Range):
            return self.range_(node, dot)
        if isinstance(node, n.With):
            return self.with_(node, dot)
        if isinstance(node, n.Unsupported):
            reason = f"Go's {node.construct} has no kplan translation"
            failing = self.gap(node.line, f"{{{{{node.construct}}}}}", reason)
            return f"{{{{ {failing.code} }}}}"
        raise TypeError(f"unknown node {node!r}")

    def action(self, pipe: n.Pipeline, dot: _Dot) -> str:
        value = self.pipeline(pipe, dot)
        if pipe.variables:
            return self.bind(pipe, value)
        if value.type in _PRINTS_AS_IS:
            return f"{{{{ {value.code} }}}}"
        return f"{{{{ go.output({value.code}) }}}}"

    def bind(self, pipe: n.Pipeline, value: _Expr) -> str:
        name = pipe.variables[0]
        target = self.lookup(name) if pipe.assign else self.declare(name)
        return f"{{% set {target} = {value.code} %}}"

    def declare(self, name: str) -> str:
        self.counter += 1
        self.uses_variables = True
        target = f"_v.{_identifier(name[1:])}{self.counter}"
        self.scopes[-1][name] = target
        return target

    def lookup(self, name: str) -> str:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        raise TemplateSyntaxError(0, f"undefined variable {name!r}")  # the parser already checked

    def condition(self, pipe: n.Pipeline, dot: _Dot) -> tuple[str, str]:
        """(statements to run first, the Jinja2 condition) of an if/with pipeline."""
        value = self.pipeline(pipe, dot)
        setup = ""
        if pipe.variables:
            setup = self.bind(pipe, value)
            value = _Expr(self.lookup(pipe.variables[0]), value.type)
        return setup, value.code if value.type in _TRUTH_AS_IS else f"go.truth({value.code})"

    def if_(self, node: n.If, dot: _Dot) -> str:
        self.scopes.append({})
        setup, test = self.condition(node.pipe, dot)
        out = f"{setup}{{% if {test} %}}{self.block(node.body, dot)}"
        orelse = node.orelse
        if orelse is not None:
            out += f"{{% else %}}{self.block(orelse, dot)}"
        self.scopes.pop()
        return out + "{% endif %}"

    def with_(self, node: n.With, dot: _Dot) -> str:
        self.scopes.append({})
        value = self.pipeline(node.pipe, dot)
        self.counter += 1
        self.uses_variables = True
        holder = f"_v.with{self.counter}"
        out = f"{{% set {holder} = {value.code} %}}"
        if node.pipe.variables:
            out += self.bind(node.pipe, _Expr(holder, value.type))
        test = holder if value.type in _TRUTH_AS_IS else f"go.truth({holder})"
        out += f"{{% if {test} %}}{self.block(node.body, _Expr(holder, value.type))}"
        if node.orelse is not None:
            out += f"{{% else %}}{self.block(node.orelse, dot)}"
        self.scopes.pop()
        return out + "{% endif %}"

    def range_(self, node: n.Range, dot: _Dot) -> str:
        self.scopes.append({})
        value = self.pipeline(node.pipe, dot)
        self.counter += 1
        key, element = f"_k{self.counter}", f"_e{self.counter}"
        out = f"{{% for {key}, {element} in go.range_items({value.code}) %}}"
        variables = node.pipe.variables
        sources = (key, element)[2 - len(variables):] if variables else ()
        for name, source in zip(variables, sources, strict=True):
            target = self.lookup(name) if node.pipe.assign else self.declare(name)
            out += f"{{% set {target} = {source} %}}"
        out += self.block(node.body, _Expr(element))
        if node.orelse is not None:
            out += f"{{% else %}}{self.block(node.orelse, dot)}"
        self.scopes.pop()
        return out + "{% endfor %}"

    # -- expressions

    def pipeline(self, pipe: n.Pipeline, dot: _Dot) -> _Expr:
        value: _Expr | None = None
        for command in pipe.commands:
            value = self.command(command, dot, value, pipe.line)
        assert value is not None
        return value

    def command(self, command: n.Command, dot: _Dot, piped: _Expr | None, line: int) -> _Expr:
        head, rest = command.args[0], command.args[1:]
        if isinstance(head, n.Identifier):
            args = [self.operand(a, dot, line) for a in rest] + ([piped] if piped is not None else [])
            return self.call(head.name, args, line)
        if rest or piped is not None:
            return self.gap(line, _describe(head), "can't give argument to non-function")
        return self.operand(head, dot, line)

    def call(self, name: str, args: list[_Expr], line: int) -> _Expr:
        if name not in FUNCTIONS:
            return self.gap(line, name, f"the function {name} has no kplan translation")
        self.functions.add(name)
        types = {a.type for a in args}
        if name in _OPERATORS and len(args) == 2 and (types == {"str"} or types == {"int"}):
            return _Expr(f"({args[0].code} {_OPERATORS[name]} {args[1].code})", "bool")
        if name in ("and", "or") and types == {"bool"}:
            return _Expr("(" + f" {name} ".join(a.code for a in args) + ")", "bool")
        if name == "not" and types == {"bool"} and len(args) == 1:
            return _Expr(f"(not {args[0].code})", "bool")
        return _Expr(f"go.{name}({', '.join(a.code for a in args)})", _RESULTS.get(name))

    def operand(self, arg: object, dot: _Dot, line: int) -> _Expr:
        if isinstance(arg, n.Dot):
            return self.fields(dot, ())
        if isinstance(arg, n.Field):
            return self.fields(dot, arg.names)
        if isinstance(arg, n.Variable):
            base: _Dot = ROOT if arg.name == "$" else _Expr(self.lookup(arg.name))
            return self.fields(base, arg.fields)
        if isinstance(arg, n.Identifier):
            return self.call(arg.name, [], line)
        if isinstance(arg, n.String):
            return _Expr(jinja_string(arg.value), "str")
        if isinstance(arg, n.Number):
            return _Expr(repr(arg.value), "int" if isinstance(arg.value, int) else "float")
        if isinstance(arg, n.Bool):
            return _Expr("true" if arg.value else "false", "bool")
        if isinstance(arg, n.Nil):
            return _Expr("none")
        if isinstance(arg, n.Pipeline):
            inner = self.pipeline(arg, dot)
            return _Expr(f"({inner.code})", inner.type)
        if isinstance(arg, n.Chain):
            inner = self.pipeline(arg.node, dot)
            return self.fields(_Expr(f"({inner.code})", inner.type), arg.fields)
        raise TypeError(f"unknown operand {arg!r}")

    def fields(self, base: _Dot, names: tuple[str, ...]) -> _Expr:
        if isinstance(base, _Expr):
            if not names:
                return base
            return _Expr(f"go.field({base.code}, {', '.join(jinja_string(x) for x in names)})")
        if not names:
            self.uses_root = True
            return _Expr("_root")
        head, rest = names[0], names[1:]
        if head not in ROOT_NAMES:
            return _Expr(f"go.no_entry({jinja_string(head)})")
        if head == "Pipes" and rest:
            if rest[0] not in self.pipes:
                return _Expr(f"go.no_entry({jinja_string(rest[0])})")
            return self.fields(_Expr(f"(Name ~ {jinja_string(self.pipes[rest[0]])})", "str"), rest[1:])
        if head == "Params" and rest:
            param = rest[0]
            code = f"Params.{param}" if param.isidentifier() else f"Params[{jinja_string(param)}]"
            kind = "str" if param in self.string_params else None
            if param in self.structured_params:
                code = f"go.floats({code})"
            return self.fields(_Expr(code, kind), rest[1:])
        kind = None if head in ("Params", "Pipes") else "str"
        return self.fields(_Expr(head, kind), rest)

    def gap(self, line: int, construct: str, reason: str) -> _Expr:
        """Record an untranslated construct; in its place, a call that fails the render saying so."""
        self.gaps.append(Gap(line, construct, reason))
        return _Expr(f"go.fail({jinja_string(f'line {line}: {construct}: {reason}')})")


def _identifier(name: str) -> str:
    cleaned = re.sub(r"\W", "_", name, flags=re.ASCII)
    return cleaned or "root"


def _describe(arg: object) -> str:
    if isinstance(arg, n.Field):
        return "." + ".".join(arg.names)
    if isinstance(arg, n.Variable):
        return arg.name + "".join("." + f for f in arg.fields)
    return type(arg).__name__.lower()
