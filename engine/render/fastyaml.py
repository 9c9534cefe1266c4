"""The fast path of parsing rendered YAML: yaml-rs (Rust), used only where it provably reads what PyYAML reads.

kplan reads rendered manifests with PyYAML's YAML 1.1 schema (as kubectl's YAML 1.1 reader does: `yes`, `on`
and `0777` are a boolean and an octal number; a date stays a string). yaml-rs is 15-20 times faster but reads
YAML 1.2, so `parse` hands a text to it only when nothing in it could be read differently, and returns None
(the caller parses with PyYAML) otherwise:

* the text uses no YAML feature the fast path leaves to PyYAML: tags (`!x`), anchors and aliases (`&a`, `*a`),
  merge keys (`<<`), explicit keys (`? k`), directives (`%YAML`), `...` markers, a document marker with content
  on its line, a BOM;
* no number could be spelt in a way the two schemas read apart: a leading zero (`0777`, `0o17`) or, where
  yaml-rs read a float, an exponent (`1e3`: every spelling with an exponent that yaml-rs reads otherwise than
  PyYAML it reads as a float, so a result without floats needs no look for exponents);
* no string yaml-rs returns might have been written plain where PyYAML would read that plain scalar otherwise
  (`yes`, `1:20`, `=`: PyYAML makes them a boolean, a number, or refuses them). A string such as `"3"` or
  `"true"` is fine: yaml-rs reads plain `3` and `true` as a number and a boolean, so it was quoted;
* every key is a string, a number or a boolean, and every document a mapping (anything else, and any error,
  PyYAML reports with its line).

Under those conditions both libraries follow the same YAML rules, so the objects are equal; the property
tests compare them on generated and on every shipped package's manifests.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable
from typing import Any

import yaml
import yaml_rs

__all__ = ["parse"]

_LINE_MARKERS = re.compile(r"\n(?:---|\.\.\.)")  # lines that begin with a document or end marker: one scan
_FEATURES = re.compile(r"(?:^|[\s\[{,:?-])[!&*]|^[ \t-]*\?(?:[ \t]|$)", re.MULTILINE)  # tags, anchors, aliases, ? keys
_LEADING_ZERO = re.compile(r"0[0-9_o]")  # 0777, 0o17: each begins with a literal, which `re` finds fast
_EXPONENTS = (re.compile(r"e[+-]?[0-9]"), re.compile(r"E[+-]?[0-9]"))  # 1e3, 1.0E-3
_NUMBER_CHARS = frozenset("0123456789_.")


def _left_to_pyyaml(text: str, checked: bool = False) -> bool:
    """Whether `text` uses a YAML feature, or spells a number with a leading zero, that the fast path leaves to
    PyYAML (document markers with content on their line, and end markers after the first line, are found by
    `_documents`, exponents by `_spells_exponent`; `checked`: its plain scalars are known to read alike, leading
    zeros too). The cheapest tests go first: looking for one character is far faster than for two."""
    if ("<" in text and "<<" in text) or "\ufeff" in text or text.startswith(("%", "...")):
        return True  # a merge key, a byte order mark, a directive or end marker on the first line
    if "%" in text and "\n%" in text:
        return True  # a directive
    if any(c in text for c in "!&*?") and _FEATURES.search(text):
        return True
    return not checked and any(_starts_token(text, m.start()) for m in _LEADING_ZERO.finditer(text))


def _spells_exponent(text: str) -> bool:
    """Whether a number in `text` may be spelt with an exponent (`1e3`, `1.0E-3`)."""
    return any(_ends_number(text, m.start()) for pattern in _EXPONENTS for m in pattern.finditer(text))


def _starts_token(text: str, at: int) -> bool:
    """Whether a number may begin at `at`: nothing but a sign stands between it and a break (space, `[`, ...)."""
    before = at - 1 if at > 0 and text[at - 1] in "+-" else at
    return before == 0 or not (text[before - 1].isalnum() or text[before - 1] in "_.+-")


def _ends_number(text: str, at: int) -> bool:
    """Whether the characters before the exponent at `at` are a number's mantissa (`1`, `1.5`) starting a token."""
    start = at
    while start > 0 and text[start - 1] in _NUMBER_CHARS:
        start -= 1
    return start < at and (text[start].isdigit() or text[start] == ".") and _starts_token(text, start)


def _plain_resolvers() -> re.Pattern[str]:
    """One pattern matching every plain scalar kplan's PyYAML schema reads as something other than a string
    (the safe schema without timestamps)."""
    patterns = {regexp.pattern for resolvers in yaml.SafeLoader.yaml_implicit_resolvers.values()
                for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"}
    return re.compile("|".join(f"(?:{p})" for p in sorted(patterns)), re.VERBOSE)


_NOT_A_PLAIN_STRING = _plain_resolvers()


def _documents(text: str) -> list[str] | None:
    """The texts between the lines that begin with a `---` marker (the marker lines left out); None when a
    marker line holds content other than a comment, or a line begins with `...` (an end marker: PyYAML's). The
    marker lines are found in one scan of the text, for both markers."""
    texts, begin = [], 0
    marks = (match.start() + 1 for match in _LINE_MARKERS.finditer(text))
    for at in itertools.chain((0,) if text.startswith("---") else (), marks):
        if text[at] == ".":
            return None
        after = at + 3
        if after == len(text) or text[after] in " \t\r\n":
            end = text.find("\n", after)
            end = len(text) if end == -1 else end
            rest = text[after:end].strip()
            if rest and not rest.startswith("#"):
                return None
            texts.append(text[begin:at])
            begin = end
    texts.append(text[begin:])
    return texts


def parse(text: str, *, checked: bool = False) -> list[dict[str, Any]] | None:
    """The non-empty documents of `text`, each a mapping; None when PyYAML must parse it (see the module).

    `checked`: every plain scalar of `text` is known to read alike (`plainscalars`, as the template rendered), so
    the result needs no walk, nor the text a look for leading zeros and exponents."""
    chunks = None if _left_to_pyyaml(text, checked) else _documents(text)
    if chunks is None:
        return None
    documents, floats = [], False
    for chunk in chunks:
        try:
            document = yaml_rs.loads(chunk, parse_datetime=False)
        except Exception:  # any error: PyYAML words it, with its line
            return None
        if document is None:
            continue
        if not isinstance(document, dict):
            return None
        if checked:
            documents.append(document)
            continue
        read = _read_alike(document)
        if read is _DIFFERS:
            return None
        floats = floats or read is _WITH_FLOATS
        documents.append(document)
    if floats and _spells_exponent(text):
        return None
    return documents


_ALIKE, _WITH_FLOATS, _DIFFERS = "alike", "alike, with floats", "differs"  # what `_read_alike` finds


def _read_alike(document: dict[Any, Any]) -> str:
    """`_DIFFERS` when a string among the keys and values of a mapping (and all it holds) is one PyYAML would
    read otherwise, or a key one PyYAML might refuse (yaml-rs accepts an empty key, and makes a tuple of a
    sequence used as one); else `_WITH_FLOATS` when a key or value is a float, else `_ALIKE`."""
    alike, pending, floats = _PLAIN_ALIKE, [document], False
    while pending:
        node = pending.pop()
        values: Iterable[Any] = node
        if type(node) is dict:
            if not alike.issuperset(node):
                if not all(map(_key_alike, node)):
                    return _DIFFERS
                floats = floats or any(type(key) is float for key in node)
            values = node.values()
        for value in values:
            kind = type(value)
            if kind is str:
                if value not in alike and not _string_alike(value):
                    return _DIFFERS
            elif kind is dict or kind is list:
                pending.append(value)
            elif kind is float:
                floats = True
            elif value is not None and kind is not int and kind is not bool:
                return _DIFFERS
    return _WITH_FLOATS if floats else _ALIKE


def _key_alike(key: Any) -> bool:
    kind = type(key)
    if kind is str:
        return key in _PLAIN_ALIKE or _string_alike(key)
    # a null key may have been left empty; NaN keys never equal each other, so yaml-rs takes two of them, where
    # PyYAML (whose NaN is one object) refuses the second as a duplicate
    return kind is int or kind is bool or (kind is float and key == key)


# Strings seen to read alike, so a string that comes back render after render (keys, names, labels) is checked
# once; bounded, and only short ones (a long string fails the resolvers' patterns within its first characters).
_PLAIN_ALIKE: set[str] = {""}
_PLAIN_ALIKE_SIZE = 16384
_PLAIN_ALIKE_LONGEST = 128


def _string_alike(text: str) -> bool:
    """Whether `text`, a string yaml-rs read, is read alike: PyYAML would read it as a string written plain,
    or yaml-rs would not (then it was quoted)."""
    alike = not (_NOT_A_PLAIN_STRING.match(text) and _plain_string_to_yaml_rs(text))
    if alike and len(text) <= _PLAIN_ALIKE_LONGEST:
        if len(_PLAIN_ALIKE) >= _PLAIN_ALIKE_SIZE:
            _PLAIN_ALIKE.clear()
            _PLAIN_ALIKE.add("")
        _PLAIN_ALIKE.add(text)
    return alike


@functools.lru_cache(maxsize=4096)
def _plain_string_to_yaml_rs(text: str) -> bool:
    """Whether yaml-rs reads `text`, written as a plain scalar, as a string (then it may have been written so)."""
    try:
        read = yaml_rs.loads(f"v: {text}", parse_datetime=False)
    except Exception:
        return True
    return not isinstance(read, dict) or isinstance(read.get("v"), str)
