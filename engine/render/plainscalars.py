"""Whether the plain scalars of a rendered text read alike in yaml-rs and PyYAML, checked piece by piece as it is
rendered, so the YAML fast path need not walk the parsed result (`fastyaml.parse(..., checked=True)`).

A plain scalar that one library reads otherwise than the other (`yes`, `1:20`, `0777`, `1e3`, `~` as a key) is
spelt only with the characters of `SUSPECT`; any scalar holding another character is a string in both. Scalars
end at whitespace and flow indicators (`[]{},`; in block context those are characters of a scalar that is then a
string), so the text is cut there into *segments* (and after a quoted key's `":`), and:

* a segment holding a character outside `SUSPECT` is fine wherever it stands;
* any other segment is *checked*: both libraries read it as a plain scalar, and must read the same value (never
  null: `~:` and `:` are keys PyYAML refuses or reads otherwise). A segment ending in `:` is a key;
* a segment that runs to the edge of a piece of text whose neighbour is unknown is checked too, and may join that
  neighbour into a longer scalar, so it must also be one that no such scalar begins with (at the end of the piece)
  or ends with (at its start): neither a run of number characters (`_NUMBER`) nor part of a word such as `yes`,
  `null` or `.inf` (`_WORDS`). An empty piece joins its neighbours: never fine.

The template's constant text is checked when it is compiled (`sandbox.KplanCodeGenerator`), each `{{ }}` value
when it is output, knowing whether the constant text beside it ends a scalar there (`text_alike`).
"""

from __future__ import annotations

import re
from typing import Any

import yaml
import yaml_rs

__all__ = ["SLOTS", "SUSPECT", "constants_alike", "segment_alike", "slot", "slot_alike", "text_alike"]

# Every character of a plain scalar that PyYAML (YAML 1.1: booleans such as yes/on/off, null, ints with 0b/0x,
# sexagesimal 1:20, floats, .inf/.nan, the merge key << and the value key =) or yaml-rs (YAML 1.2 core: true/false,
# null/~, ints with 0x/0o/0b, floats with exponents, .inf/.nan in any case) reads as other than a string.
SUSPECT = frozenset("0123456789+-._:~=<" "abcdefABCDEF" "xXoObB" "iInN" "tTrRuUlLsS" "yY")
_SEPARATORS = re.compile(r"""[ \t\r\n\[\]{},]+|(?<=["']):""")  # where scalars end; `":` after a quoted key
_ENDS = frozenset(" \t\r\n[]{},")  # characters that end a scalar beside them (or make it a string)
# The characters of the numbers either library reads (with 0b, 0o, 0x, exponents and sexagesimal parts), and the
# words either reads as other than a string, in lower case (any case is taken to be one).
_NUMBER = frozenset("0123456789+-._:" "eEbBxXoO" "abcdefABCDEF")
_WORDS = ("yes", "no", "true", "false", "on", "off", "null", "~", "<<", "=", ".inf", "+.inf", "-.inf", ".nan")


def slot(before: str | None, after: str | None) -> str:
    """Where a value between the constant texts `before` and `after` (None: not known) stands, as a key of
    `SLOTS`: whether it begins a scalar (the text before it ends in whitespace or a flow indicator) and ends one
    (the text after it begins with one, or with `:` and one: then it is a key), or stands between two quotes. A
    value joined to constant text that holds a character outside `SUSPECT` before its next separator is part of a
    string there, so that side is taken as bounded too (its edge is then checked as if alone: stricter than need
    be)."""
    for quote in "\"'":
        if before is not None and after is not None and before.endswith(quote) and after.startswith(quote):
            return quote
    left = before is not None and before != "" and (before[-1] in _ENDS or _joins_a_string(before, -1))
    key = after is not None and after[:1] == ":" and after[1:2] in _ENDS and len(after) > 1
    right = key or (after is not None and after != "" and (after[0] in _ENDS or _joins_a_string(after, 0)))
    return ("key " if key else "") + ("both" if left and right else "left" if left else "right" if right else "free")


def _joins_a_string(text: str, side: int) -> bool:
    """Whether the segment of `text` at its start (`side` 0) or end (-1) holds a character outside `SUSPECT` (a
    scalar that runs into a segment takes in all of it, up to a separator or a quoted key's `":`)."""
    return not SUSPECT.issuperset(_SEPARATORS.split(text)[side])


def slot_alike(text: str, where: str) -> bool:
    """Whether the scalars `text` takes part in read alike, output in the slot `where` (see `slot`). Between two
    quotes it is inside a quoted scalar, or part of a plain one that holds the quote (a string), unless it holds
    that quote itself (or a backslash or line break, which quoted scalars read otherwise)."""
    if where in ("\"", "'"):
        return not any(c in text for c in (where, "\\", "\n", "\r"))
    left, right = where.endswith(("both", "left")), where.endswith(("both", "right"))
    if where.startswith("key "):
        return text[-1:] not in _ENDS and text != "" and text_alike(text, left, True)
    if not text:  # between two separators, an empty text joins nothing
        return where == "both"
    return text_alike(text, left, right)


SLOTS = ("free", "left", "right", "both", "key free", "key left", "key right", "key both", "\"", "'")


def constants_alike(pieces: list[str | None]) -> bool:
    """Whether the constant texts among `pieces` (None: a value, checked as it is output) read alike: beside a
    value, a segment is checked standing alone (the value's check covers its joining the value, and a key's `:`
    after it); at either end, whose neighbour is not known, it must also not join its neighbour (see the module)."""
    last = len(pieces) - 1
    for at, piece in enumerate(pieces):
        if piece is None:
            continue
        if at > 0 and piece[:1] == ":" and piece[1:2] in _ENDS and len(piece) > 1:
            piece = piece[1:]  # the key indicator of the value before it
        if not text_alike(piece, at > 0, at < last):
            return False
    return True


def text_alike(text: str, left: bool, right: bool) -> bool:
    """Whether every scalar `text` takes part in reads alike, when it begins one (`left`) or may join the text before
    it, and ends one (`right`) or may join the text after it."""
    if not text:
        return False
    parts = _SEPARATORS.split(text)
    last = len(parts) - 1
    for at, part in enumerate(parts):
        if not part:
            continue
        if not segment_alike(part):
            return False
        start, end = at == 0 and not left, at == last and not right
        if (start or end) and SUSPECT.issuperset(part) and _may_join(part, start, end):
            return False
    return True


def _may_join(segment: str, start: bool, end: bool) -> bool:
    """Whether text before `segment` (`start`) or after it (`end`) may make it part of a scalar that one library
    reads as other than a string."""
    if _NUMBER.issuperset(segment):
        return True
    stems = {segment.lower(), segment.lower().removesuffix(":")}  # a key's colon ends the scalar
    for stem in stems:
        for word in _WORDS:
            if (word.startswith(stem) if not start else word.endswith(stem) if not end else stem in word):
                return True
    return False


def segment_alike(segment: str) -> bool:
    """Whether a segment standing alone (see the module) reads alike."""
    if not SUSPECT.issuperset(segment) or segment == "-":  # `-` alone is a sequence entry's indicator
        return True
    if segment.endswith(":"):
        segment = segment[:-1]
    if not segment:
        return False
    if _PLAIN_ALIKE.fullmatch(segment):
        return True
    found = _READ_ALIKE.get(segment)
    if found is None:
        if len(_READ_ALIKE) >= _READ_ALIKE_SIZE:
            _READ_ALIKE.clear()
        found = _READ_ALIKE[segment] = _reads_alike(segment)
    return found


# Segments both libraries read as the same value, known without reading them (a read costs ~60 µs, and a package's
# templates and an Instance's values hold many new ones: `-s3`, `r10`, `8080`): a decimal integer without sign or
# leading zero, short enough for any integer type (an int in both); and one without a `:` that holds a digit and a
# character no number has (not a number, and no word either library reads otherwise holds a digit: a string in both).
_NOT_IN_NUMBERS = re.escape("".join(sorted(SUSPECT - _NUMBER)))
_PLAIN_ALIKE = re.compile(f"0|[1-9][0-9]{{0,17}}|(?=[^:]*[0-9])(?=[^:]*[{_NOT_IN_NUMBERS}])[^:]+")
_READ_ALIKE: dict[str, bool] = {}
_READ_ALIKE_SIZE = 16384


class _PlainLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """PyYAML's safe schema without timestamps, as kplan reads rendered manifests."""


_PlainLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _reads_alike(scalar: str) -> bool:
    """Whether both libraries read `scalar`, written plain, as the same value, and not as null nor NaN (a key:
    yaml-rs takes two NaN keys, PyYAML refuses the second as a duplicate)."""
    try:
        fast: Any = yaml_rs.loads(f"v: {scalar}", parse_datetime=False)
        slow: Any = yaml.load(f"v: {scalar}", Loader=_PlainLoader)
    except Exception:
        return False
    if not (isinstance(fast, dict) and isinstance(slow, dict) and list(fast) == ["v"] and list(slow) == ["v"]):
        return False
    a, b = fast["v"], slow["v"]
    return a is not None and a == a and type(a) is type(b) and repr(a) == repr(b)
