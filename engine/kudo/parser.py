"""Go text/template's parser: tokens into the syntax tree of `engine.kudo.nodes`.

Follows `text/template/parse/parse.go`: actions are control structures (`if`, `else if`,
`range`, `with`, `end`) or pipelines; a pipeline may start by declaring (`:=`) or assigning
(`=`) variables (two for `range $i, $v :=`); commands are separated by `|`; operands are
fields, variables, function names, constants and parenthesized pipelines, each possibly
followed by more fields. Variables are checked the way Go does: using one that is not
declared in scope is a parse error. `define`, `template`, `block`, `break` and `continue`
parse into `Unsupported` nodes for the translator to report.
"""

from __future__ import annotations

from engine.kudo import nodes as n
from engine.kudo.lexer import Kind, TemplateSyntaxError, Token, tokenize

__all__ = ["TemplateSyntaxError", "parse"]

_ENDS = frozenset({"end", "else"})


def parse(source: str) -> tuple[object, ...]:
    """The nodes of a template; TemplateSyntaxError (with the line) when Go would not parse it."""
    parser = _Parser(tokenize(source))
    body, stop = parser.list()
    if stop is not None:
        raise TemplateSyntaxError(stop.line, f"unexpected {{{{{stop.text}}}}}")
    return body


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.scopes: list[set[str]] = [{"$"}]

    # -- tokens

    def peek(self) -> Token:
        return self.tokens[self.pos]

    def next(self) -> Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def skip_space(self) -> Token:
        while self.peek().kind is Kind.SPACE:
            self.pos += 1
        return self.peek()

    def expect(self, kind: Kind, context: str) -> Token:
        token = self.next() if self.skip_space().kind is kind else self.peek()
        if token.kind is not kind:
            raise TemplateSyntaxError(token.line, f"unexpected {_describe(token)} in {context}")
        return token

    # -- lists and actions

    def list(self) -> tuple[tuple[object, ...], Token | None]:
        """Nodes up to EOF, or up to an `{{end}}`/`{{else}}` keyword (returned, consumed through the keyword)."""
        body: list[object] = []
        while True:
            token = self.next()
            if token.kind is Kind.EOF:
                self.pos -= 1
                return tuple(body), None
            if token.kind is Kind.TEXT:
                body.append(n.Text(token.text))
            elif token.kind is Kind.COMMENT:
                body.append(n.Comment(token.line))
            else:
                keyword = self.skip_space()
                if keyword.kind is Kind.KEYWORD and keyword.text in _ENDS:
                    self.next()
                    return tuple(body), keyword
                body.append(self.action(token.line))

    def action(self, line: int) -> object:
        token = self.peek()
        if token.kind is Kind.KEYWORD:
            handler = {"if": self.if_, "range": self.range_, "with": self.with_}.get(token.text)
            if handler is not None:
                self.next()
                return handler(line)
            if token.text in ("define", "template", "block", "break", "continue"):
                return self.unsupported(token)
        pipe = self.pipeline("command", line)
        self.expect(Kind.RIGHT, "command")
        return n.Action(pipe)

    def unsupported(self, keyword: Token) -> n.Unsupported:
        self.next()
        while self.next().kind is not Kind.RIGHT:
            if self.peek().kind is Kind.EOF:
                raise TemplateSyntaxError(keyword.line, "unclosed action")
        body: tuple[object, ...] = ()
        if keyword.text in ("define", "block"):
            body, stop = self.list()
            if stop is None or stop.text != "end":
                raise TemplateSyntaxError(keyword.line, f"unexpected EOF in {keyword.text}")
            self.expect(Kind.RIGHT, "end")
        return n.Unsupported(keyword.line, keyword.text, body)

    def control(self, context: str, line: int) -> tuple[n.Pipeline, tuple[object, ...], tuple[object, ...] | None]:
        self.scopes.append(set())
        pipe = self.pipeline(context, line)
        self.expect(Kind.RIGHT, context)
        body, stop = self.list()
        orelse: tuple[object, ...] | None = None
        if stop is None:
            raise TemplateSyntaxError(line, f"unexpected EOF in {context}")
        if stop.text == "else":
            after = self.skip_space()
            if after.kind is Kind.KEYWORD and after.text in ("if", "with") and context in ("if", "with"):
                self.next()  # `{{else if}}`: an if nested in the else branch, sharing this one's end
                orelse = ((self.if_ if after.text == "if" else self.with_)(after.line),)
            else:
                self.expect(Kind.RIGHT, "else")
                orelse, stop = self.list()
                if stop is None or stop.text != "end":
                    raise TemplateSyntaxError(line, f"expected end; found {stop.text if stop else 'EOF'}")
                self.expect(Kind.RIGHT, "end")
        else:
            self.expect(Kind.RIGHT, "end")
        self.scopes.pop()
        return pipe, body, orelse

    def if_(self, line: int) -> n.If:
        return n.If(*self.control("if", line))

    def with_(self, line: int) -> n.With:
        return n.With(*self.control("with", line))

    def range_(self, line: int) -> n.Range:
        return n.Range(*self.control("range", line))

    # -- pipelines

    def pipeline(self, context: str, line: int) -> n.Pipeline:
        variables, assign = self.declarations(context)
        commands: list[n.Command] = []
        while True:
            token = self.skip_space()
            if token.kind in (Kind.RIGHT, Kind.CLOSE):
                break
            commands.append(self.command())
        if not commands:
            raise TemplateSyntaxError(line, f"missing value for {context}")
        return n.Pipeline(line, tuple(commands), variables, assign)

    def declarations(self, context: str) -> tuple[tuple[str, ...], bool]:
        start = self.pos
        first = self.skip_space()
        if first.kind is not Kind.VARIABLE:
            return (), False
        self.next()
        after = self.skip_space()
        if after.kind in (Kind.DECLARE, Kind.ASSIGN):
            self.next()
            return self.declare((first.text,), after)
        if after.kind is Kind.COMMA and context == "range":
            self.next()
            second = self.expect(Kind.VARIABLE, "range")
            op = self.skip_space()
            if op.kind not in (Kind.DECLARE, Kind.ASSIGN):
                raise TemplateSyntaxError(op.line, f"expected := or = in range; found {_describe(op)}")
            self.next()
            return self.declare((first.text, second.text), op)
        self.pos = start
        return (), False

    def declare(self, names: tuple[str, ...], op: Token) -> tuple[tuple[str, ...], bool]:
        if op.kind is Kind.ASSIGN:
            for name in names:
                self.check_variable(name, op.line)
            return names, True
        self.scopes[-1].update(names)  # Go declares before parsing the value, as here
        return names, False

    def check_variable(self, name: str, line: int) -> None:
        if not any(name in scope for scope in self.scopes):
            raise TemplateSyntaxError(line, f"undefined variable {name!r}")

    def command(self) -> n.Command:
        args: list[object] = []
        while True:
            args.append(self.operand())
            token = self.peek()
            if token.kind is Kind.SPACE:
                token = self.skip_space()
                if token.kind not in (Kind.RIGHT, Kind.CLOSE, Kind.PIPE):
                    continue
            if token.kind in (Kind.RIGHT, Kind.CLOSE):
                break
            if token.kind is Kind.PIPE:
                self.next()
                break
            raise TemplateSyntaxError(token.line, f"unexpected {_describe(token)} in operand")
        return n.Command(tuple(args))

    def operand(self) -> object:
        term = self.term()
        fields: list[str] = []
        while self.peek().kind is Kind.FIELD and self.peek().text != ".":
            fields.append(self.next().text[1:])
        if not fields:
            return term
        if isinstance(term, n.Field):
            return n.Field(term.names + tuple(fields))
        if isinstance(term, n.Variable):
            return n.Variable(term.name, term.fields + tuple(fields))
        if isinstance(term, n.Pipeline):
            return n.Chain(term, tuple(fields))
        raise TemplateSyntaxError(self.peek().line, "unexpected . after term")

    def term(self) -> object:
        token = self.next()
        kind, text = token.kind, token.text
        if kind is Kind.IDENTIFIER:
            return n.Identifier(text)
        if kind is Kind.FIELD:
            return n.Dot() if text == "." else n.Field((text[1:],))
        if kind is Kind.VARIABLE:
            self.check_variable(text, token.line)
            return n.Variable(text)
        if kind is Kind.KEYWORD and text in ("true", "false"):
            return n.Bool(text == "true")
        if kind is Kind.KEYWORD and text == "nil":
            return n.Nil()
        if kind is Kind.NUMBER or kind is Kind.CHAR:
            return _number(token)
        if kind in (Kind.STRING, Kind.RAW_STRING):
            return n.String(text[1:-1] if kind is Kind.RAW_STRING else unquote(text, token.line))
        if kind is Kind.OPEN:
            pipe = self.pipeline("parenthesized pipeline", token.line)
            self.expect(Kind.CLOSE, "parenthesized pipeline")
            return pipe
        raise TemplateSyntaxError(token.line, f"unexpected {_describe(token)} in operand")


def _describe(token: Token) -> str:
    if token.kind is Kind.EOF:
        return "EOF"
    return f'"{token.text}"' if token.kind not in (Kind.SPACE, Kind.TEXT) else token.kind.value


def _number(token: Token) -> n.Number:
    text = token.text
    if token.kind is Kind.CHAR:
        return n.Number(ord(unquote('"' + text[1:-1] + '"', token.line)), text)
    clean = text.replace("_", "")
    if clean.endswith("i"):
        raise TemplateSyntaxError(token.line, f"complex number {text} is not supported")
    lowered = clean.lower().lstrip("+-")
    try:
        if lowered.startswith(("0x", "0b", "0o")) and not any(c in lowered for c in ".p"):
            return n.Number(int(clean, 0), text)
        if any(c in lowered for c in ".ep") and not lowered.startswith("0x"):
            return n.Number(float(clean), text)
        if lowered.startswith("0x"):
            return n.Number(float.fromhex(clean), text)
        if len(lowered) > 1 and lowered.startswith("0"):
            return n.Number(int(lowered, 8) * (-1 if clean.startswith("-") else 1), text)
        return n.Number(int(clean), text)
    except ValueError:
        raise TemplateSyntaxError(token.line, f"bad number syntax: {text!r}") from None


_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", '"': '"',
            "'": "'"}


def unquote(text: str, line: int) -> str:
    """Go's strconv.Unquote of a double-quoted string literal."""
    body, out, i = text[1:-1], [], 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        code = body[i + 1:i + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
            continue
        size = {"x": 2, "u": 4, "U": 8}.get(code)
        digits = body[i + 2:i + 2 + size] if size else body[i + 1:i + 4]
        base = 16 if size else 8
        try:
            value = int(digits, base)
            if len(digits) != (size or 3):
                raise ValueError(digits)
        except ValueError:
            raise TemplateSyntaxError(line, f"invalid syntax in string {text}") from None
        out.append(chr(value))  # \x and octal escapes are bytes in Go; taken as Latin-1 code points here
        i += 2 + size if size else 4
    return "".join(out)
