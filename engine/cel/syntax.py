"""A CEL parser to the AST cel-go's checker sees: macros (`has`, `all`, `exists`, `exists_one`, `map`, `filter`)
expanded into comprehensions as cel-go's parser/macro.go expands them.

cel-expr-python compiles and runs expressions but does not expose its AST; the cost estimator
(`engine.cel.cost`) needs one. Only expressions that cel-expr-python already compiled are parsed here, so this
parser need not report errors well: anything it does not know raises `Unsupported`, and the caller then makes
no estimate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["ACCUMULATOR", "Call", "Comprehension", "Expr", "Ident", "ListExpr", "Literal", "MapExpr", "Select",
           "Unsupported", "parse"]

ACCUMULATOR = "@result"


class Unsupported(ValueError):
    """A construct this parser (or the estimator) does not cover."""


@dataclass(eq=False)
class Expr:
    """A node; identity is by object (cel-go keys its tables by expression id)."""


@dataclass(eq=False)
class Literal(Expr):
    kind: str  # bool, int, uint, double, string, bytes, null
    value: object


@dataclass(eq=False)
class Ident(Expr):
    name: str


@dataclass(eq=False)
class Select(Expr):
    operand: Expr
    field: str
    test_only: bool = False


@dataclass(eq=False)
class Call(Expr):
    function: str
    args: list[Expr]
    target: Expr | None = None


@dataclass(eq=False)
class ListExpr(Expr):
    elements: list[Expr] = field(default_factory=list)


@dataclass(eq=False)
class MapExpr(Expr):
    entries: list[tuple[Expr, Expr]] = field(default_factory=list)


@dataclass(eq=False)
class Comprehension(Expr):
    iter_var: str
    iter_range: Expr
    accu_var: str
    accu_init: Expr
    condition: Expr
    step: Expr
    result: Expr


_TOKEN = re.compile(r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<string>[rRbB]{0,2}(?:'''(?:\\.|.)*?'''|\"\"\"(?:\\.|.)*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))
  | (?P<number>0[xX][0-9a-fA-F]+[uU]?|\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+[uU]?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\|\||&&|==|!=|<=|>=|\.\?|\?\.|[-+*/%!<>?:.,()\[\]{}])
""", re.X | re.S)
_BINARY = (("||",), ("&&",), ("<", "<=", ">", ">=", "==", "!=", "in"), ("+", "-"), ("*", "/", "%"))
_OPERATORS = {"||": "_||_", "&&": "_&&_", "<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "==": "_==_",
              "!=": "_!=_", "in": "@in", "+": "_+_", "-": "_-_", "*": "_*_", "/": "_/_", "%": "_%_"}
_RESERVED = {"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if",
             "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"}


def _tokens(source: str) -> list[tuple[str, str]]:
    out, i = [], 0
    while i < len(source):
        found = _TOKEN.match(source, i)
        if found is None:
            raise Unsupported(f"unexpected character at {i}")
        kind = found.lastgroup or ""
        if kind != "space":
            text = found.group(0)
            out.append(("op" if kind == "ident" and text == "in" else kind, text))
        i = found.end()
    return out


def _string(text: str) -> Literal:
    prefix = re.match(r"[rRbB]*", text).group(0)  # type: ignore[union-attr]
    body = text[len(prefix):]
    quote = 3 if body[:3] in ("'''", '"""') else 1
    body = body[quote:-quote]
    raw, data = "r" in prefix.lower(), "b" in prefix.lower()
    if not raw and "\\" in body:
        if re.search(r"\\[0-7xXuU]", body):
            raise Unsupported("escapes of code points")
        body = re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f",
                                            "v": "\v"}.get(m.group(1), m.group(1)), body, flags=re.S)
    return Literal("bytes", body.encode()) if data else Literal("string", body)


class _Parser:
    def __init__(self, source: str) -> None:
        self.tokens = _tokens(source)
        self.i = 0

    def peek(self, offset: int = 0) -> str:
        at = self.i + offset
        return self.tokens[at][1] if at < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.tokens) or (expected is not None and self.tokens[self.i][1] != expected):
            raise Unsupported(f"expected {expected!r}")
        self.i += 1
        return self.tokens[self.i - 1]

    def expression(self) -> Expr:
        condition = self.binary(0)
        if self.peek() != "?":
            return condition
        self.take("?")
        then = self.binary(0)
        self.take(":")
        return Call("_?_:_", [condition, then, self.expression()])

    def binary(self, level: int) -> Expr:
        if level == len(_BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while self.peek() in _BINARY[level] and self.i < len(self.tokens) and self.tokens[self.i][0] == "op":
            op = self.take()[1]
            right = self.binary(level + 1)
            # && and || chains are balanced in cel-go; the estimate is the same either way
            left = Call(_OPERATORS[op], [left, right])
        return left

    def unary(self) -> Expr:
        if self.peek() in ("!", "-"):
            op = self.take()[1]
            if op == "-" and self.i < len(self.tokens) and self.tokens[self.i][0] == "number":
                number = self.primary()
                if isinstance(number, Literal) and number.kind in ("int", "double"):
                    number.value = -number.value  # type: ignore[operator]
                    return self.member(number)
            operand = self.unary()
            return Call("!_" if op == "!" else "-_", [operand])
        return self.member(self.primary())

    def member(self, expr: Expr) -> Expr:
        while True:
            if self.peek() == ".":
                self.take(".")
                name = self.take()[1]
                if self.peek() == "(":
                    expr = _macro(name, expr, self.arguments(")"), member=True)
                else:
                    expr = Select(expr, name)
            elif self.peek() == "[":
                self.take("[")
                index = self.expression()
                self.take("]")
                expr = Call("_[_]", [expr, index])
            elif self.peek() in (".?", "?."):
                raise Unsupported("optional selection")
            else:
                return expr

    def arguments(self, close: str) -> list[Expr]:
        self.take("(" if close == ")" else "[")
        args: list[Expr] = []
        while self.peek() != close:
            args.append(self.expression())
            if self.peek() != ",":
                break
            self.take(",")
        self.take(close)
        return args

    def primary(self) -> Expr:
        kind, text = self.take()
        if kind == "number":
            return _number(text)
        if kind == "string":
            return _string(text)
        if kind == "ident":
            if text in ("true", "false"):
                return Literal("bool", text == "true")
            if text == "null":
                return Literal("null", None)
            if text in _RESERVED:
                raise Unsupported(text)
            if self.peek() == "(":
                return _macro(text, None, self.arguments(")"), member=False)
            return Ident(text)
        if text == "(":
            inner = self.expression()
            self.take(")")
            return inner
        if text == "[":
            self.i -= 1
            return ListExpr(self.arguments("]"))
        if text == "{":
            return self.map()
        raise Unsupported(f"unexpected {text!r}")

    def map(self) -> Expr:
        entries: list[tuple[Expr, Expr]] = []
        while self.peek() != "}":
            key = self.expression()
            self.take(":")
            entries.append((key, self.expression()))
            if self.peek() != ",":
                break
            self.take(",")
        self.take("}")
        return MapExpr(entries)


def _number(text: str) -> Literal:
    if text[-1] in "uU":
        return Literal("uint", int(text[:-1], 0))
    if text.lower().startswith("0x"):
        return Literal("int", int(text, 16))
    if any(c in text for c in ".eE"):
        return Literal("double", float(text))
    return Literal("int", int(text))


_NAMESPACES = ("sets", "lists")


def _accu() -> Ident:
    return Ident(ACCUMULATOR)


def _macro(name: str, target: Expr | None, args: list[Expr], member: bool) -> Expr:
    """cel-go's standard macros (parser/macro.go); any other call stays a call."""
    if not member and name == "has" and len(args) == 1:
        if not isinstance(args[0], Select):
            raise Unsupported("has() of a non-selection")
        return Select(args[0].operand, args[0].field, test_only=True)
    if member and isinstance(target, Ident) and target.name in _NAMESPACES:
        return Call(f"{target.name}.{name}", args)
    if not member or target is None or name not in ("all", "exists", "exists_one", "map", "filter"):
        return Call(name, args, target)
    if len(args) not in (2, 3) or (len(args) == 3 and name != "map"):
        return Call(name, args, target)
    if not isinstance(args[0], Ident):
        raise Unsupported("macro variable")
    var = args[0].name
    if name == "all":
        return Comprehension(var, target, ACCUMULATOR, Literal("bool", True),
                             Call("@not_strictly_false", [_accu()]), Call("_&&_", [_accu(), args[1]]), _accu())
    if name == "exists":
        return Comprehension(var, target, ACCUMULATOR, Literal("bool", False),
                             Call("@not_strictly_false", [Call("!_", [_accu()])]),
                             Call("_||_", [_accu(), args[1]]), _accu())
    if name == "exists_one":
        step = Call("_?_:_", [args[1], Call("_+_", [_accu(), Literal("int", 1)]), _accu()])
        return Comprehension(var, target, ACCUMULATOR, Literal("int", 0), Literal("bool", True), step,
                             Call("_==_", [_accu(), Literal("int", 1)]))
    if name == "map":
        function = args[-1]
        mapped: Expr = Call("_+_", [_accu(), ListExpr([function])])
        if len(args) == 3:
            mapped = Call("_?_:_", [args[1], mapped, _accu()])
        return Comprehension(var, target, ACCUMULATOR, ListExpr([]), Literal("bool", True), mapped, _accu())
    step = Call("_?_:_", [args[1], Call("_+_", [_accu(), ListExpr([Ident(var)])]), _accu()])
    return Comprehension(var, target, ACCUMULATOR, ListExpr([]), Literal("bool", True), step, _accu())


def parse(source: str) -> Expr:
    """The expanded AST of an expression; raises Unsupported for what is not covered."""
    parser = _Parser(source)
    expr = parser.expression()
    if parser.i != len(parser.tokens):
        raise Unsupported("trailing tokens")
    return expr
