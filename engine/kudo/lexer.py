"""Go text/template's lexer: template text into text runs and action tokens, trim markers applied.

Follows `text/template/parse/lex.go`: `{{- ` and ` -}}` trim the whitespace next to an action,
`{{/* */}}` is a comment, and inside actions there are fields (`.A`), variables (`$x`),
identifiers, strings (interpreted, raw and character constants), numbers and the punctuation
`( ) | , := =`. Spaces separate arguments, so they are tokens too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Kind", "TemplateSyntaxError", "Token", "tokenize"]

LEFT, RIGHT = "{{", "}}"
SPACES = " \t\r\n"
KEYWORDS = frozenset({"if", "else", "end", "range", "with", "define", "template", "block", "nil", "true", "false",
                      "break", "continue"})


class TemplateSyntaxError(Exception):
    """A template Go's parser would refuse, at `line`."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


class Kind(StrEnum):
    TEXT = "text"
    LEFT = "{{"
    RIGHT = "}}"
    COMMENT = "comment"
    SPACE = "space"
    FIELD = "field"
    VARIABLE = "variable"
    IDENTIFIER = "identifier"
    KEYWORD = "keyword"
    STRING = "string"
    RAW_STRING = "raw string"
    CHAR = "char"
    NUMBER = "number"
    PIPE = "|"
    OPEN = "("
    CLOSE = ")"
    DECLARE = ":="
    ASSIGN = "="
    COMMA = ","
    EOF = "EOF"


@dataclass(frozen=True)
class Token:
    kind: Kind
    text: str
    line: int


_NUMBER = re.compile(
    r"[+-]?(?:0[xX][0-9a-fA-F_]*(?:\.[0-9a-fA-F_]*)?(?:[pP][+-]?[0-9_]+)?"
    r"|0[bB][01_]+|0[oO][0-7_]+"
    r"|(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9_]+)?)i?"
)
_WORD = re.compile(r"[A-Za-z0-9_\u00c0-\uffff]*")
_SINGLE = {"|": Kind.PIPE, "(": Kind.OPEN, ")": Kind.CLOSE, ",": Kind.COMMA, "=": Kind.ASSIGN}


def tokenize(source: str) -> list[Token]:
    """Every token of `source`, ending with EOF; TemplateSyntaxError for what Go's lexer rejects."""
    return _Lexer(source).run()


class _Lexer:
    def __init__(self, source: str) -> None:
        self.src = source
        self.pos = 0
        self.tokens: list[Token] = []

    def line(self, pos: int | None = None) -> int:
        return self.src.count("\n", 0, self.pos if pos is None else pos) + 1

    def run(self) -> list[Token]:
        while self.pos < len(self.src):
            start = self.src.find(LEFT, self.pos)
            if start < 0:
                self.text(self.src[self.pos:], self.pos)
                self.pos = len(self.src)
                break
            trim = self.src.startswith("-", start + 2) and self.src[start + 3:start + 4] in tuple(SPACES)
            text = self.src[self.pos:start]
            self.text(text.rstrip(SPACES) if trim else text, self.pos)
            self.pos = start + 2 + (2 if trim else 0)
            self.action(start)
        self.tokens.append(Token(Kind.EOF, "", self.line()))
        return self.tokens

    def text(self, text: str, pos: int) -> None:
        if text:
            self.tokens.append(Token(Kind.TEXT, text, self.line(pos)))

    def close(self) -> bool:
        """At ` -}}` or `}}`: emit RIGHT, apply a trim marker, and say so."""
        src, pos = self.src, self.pos
        trim = src[pos:pos + 1] in tuple(SPACES) and src.startswith("-" + RIGHT, pos + 1)
        if not (trim or src.startswith(RIGHT, pos)):
            return False
        self.tokens.append(Token(Kind.RIGHT, RIGHT, self.line()))
        self.pos = pos + (4 if trim else 2)
        if trim:
            while self.pos < len(src) and src[self.pos] in SPACES:
                self.pos += 1
        return True

    def action(self, start: int) -> None:
        line = self.line(start)
        src = self.src
        if src.startswith("/*", self.pos):
            end = src.find("*/", self.pos + 2)
            if end < 0:
                raise TemplateSyntaxError(line, "unclosed comment")
            self.tokens.append(Token(Kind.COMMENT, src[self.pos + 2:end], line))
            self.pos = end + 2
            if not self.close():
                raise TemplateSyntaxError(line, "comment ends before closing delimiter")
            self.tokens.pop()
            return
        self.tokens.append(Token(Kind.LEFT, LEFT, line))
        depth = 0
        while True:
            if self.pos >= len(src):
                raise TemplateSyntaxError(line, "unclosed action")
            if depth == 0 and self.close():
                return
            depth += self.item(line)

    def item(self, action_line: int) -> int:
        """Lex one token inside an action; the change of parenthesis depth."""
        src, pos = self.src, self.pos
        char = src[pos]
        line = self.line()
        if char in SPACES:
            end = pos
            while end < len(src) and src[end] in SPACES and not self._closes_at(end):
                end += 1
            if end == pos:  # ` -}}` right here
                raise TemplateSyntaxError(line, "unexpected space")
            return self.emit(Kind.SPACE, end, line)
        if src.startswith(RIGHT, pos):
            raise TemplateSyntaxError(action_line, "unexpected right paren or unbalanced parentheses")
        if src.startswith(":=", pos):
            return self.emit(Kind.DECLARE, pos + 2, line)
        if char in _SINGLE:
            delta = {"(": 1, ")": -1}.get(char, 0)
            self.emit(_SINGLE[char], pos + 1, line)
            return delta
        if char == '"':
            return self.emit(Kind.STRING, self.quoted(pos, '"', line), line)
        if char == "'":
            return self.emit(Kind.CHAR, self.quoted(pos, "'", line), line)
        if char == "`":
            end = src.find("`", pos + 1)
            if end < 0:
                raise TemplateSyntaxError(line, "unterminated raw quoted string")
            return self.emit(Kind.RAW_STRING, end + 1, line)
        if char == "$":
            return self.emit(Kind.VARIABLE, _WORD.match(src, pos + 1).end(), line)  # type: ignore[union-attr]
        if char == "." and not src[pos + 1:pos + 2].isdigit():
            return self.emit(Kind.FIELD, _WORD.match(src, pos + 1).end(), line)  # type: ignore[union-attr]
        if char.isdigit() or (char in "+-." and src[pos + 1:pos + 2].replace(".", "0").isdigit()):
            match = _NUMBER.match(src, pos)
            end = match.end() if match else pos + 1
            if end < len(src) and (src[end].isalnum() or src[end] == "_"):
                raise TemplateSyntaxError(line, f"bad number syntax: {src[pos:end + 1]!r}")
            return self.emit(Kind.NUMBER, end, line)
        if char.isalpha() or char == "_":
            end = _WORD.match(src, pos).end()  # type: ignore[union-attr]
            word = src[pos:end]
            return self.emit(Kind.KEYWORD if word in KEYWORDS else Kind.IDENTIFIER, end, line)
        raise TemplateSyntaxError(line, f"unrecognized character in action: {char!r}")

    def _closes_at(self, pos: int) -> bool:
        return self.src.startswith("-" + RIGHT, pos + 1) and self.src[pos] in SPACES and pos + 1 < len(self.src)

    def quoted(self, pos: int, quote: str, line: int) -> int:
        end = pos + 1
        while end < len(self.src):
            char = self.src[end]
            if char == "\\":
                end += 2
                continue
            if char == "\n":
                break
            if char == quote:
                return end + 1
            end += 1
        what = "quoted string" if quote == '"' else "character constant"
        raise TemplateSyntaxError(line, f"unterminated {what}")

    def emit(self, kind: Kind, end: int, line: int) -> int:
        self.tokens.append(Token(kind, self.src[self.pos:end], line))
        self.pos = end
        return 0
