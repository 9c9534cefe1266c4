"""gopkg.in/yaml.v2's Marshal of plain data, which is what KUDO's `toYaml` returned.

Block style with yaml.v2's choices: map keys in its "natural" order (digit runs by value, letters
after other characters), sequences not indented under their key, strings plain when they read back
as strings, double-quoted when they would read as another type (YAML 1.1 booleans and null, Go
integers in any base, floats, timestamps), single-quoted when plain is not allowed, literal blocks
for multi-line text; floats as strconv writes them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from engine.render.gofmt import format_float, quote

__all__ = ["yaml_marshal"]


def yaml_marshal(value: Any) -> str:
    """gopkg.in/yaml.v2 Marshal of plain data: block style, keys in yaml.v2's order, a final newline."""
    if isinstance(value, Mapping):
        return "{}\n" if not value else "".join(_yaml_lines(value, 0))
    if isinstance(value, list | tuple):
        return "[]\n" if not value else "".join(_yaml_lines(value, 0))
    return _yaml_scalar(value, 0) + "\n"


def _yaml_lines(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, Mapping):
        for key in sorted(value, key=_YamlKey):
            item = value[key]
            head = f"{pad}{_yaml_scalar(key, indent)}:"
            if isinstance(item, Mapping) and item:
                lines += [head + "\n", *_yaml_lines(item, indent + 2)]
            elif isinstance(item, list | tuple) and item:
                lines += [head + "\n", *_yaml_lines(item, indent)]
            else:
                lines.append(f"{head} {_yaml_inline(item, indent + 2)}\n")
        return lines
    for item in value:
        if isinstance(item, Mapping | list | tuple) and item:
            nested = _yaml_lines(item, indent + 2)
            lines += [f"{pad}- {nested[0][indent + 2:]}", *nested[1:]]
        else:
            lines.append(f"{pad}- {_yaml_inline(item, indent + 2)}\n")
    return lines


def _yaml_inline(value: Any, indent: int) -> str:
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, list | tuple):
        return "[]"
    return _yaml_scalar(value, indent)


def _yaml_scalar(value: Any, indent: int) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        return format_float(value)
    text = str(value)
    if "\n" in text:
        return _yaml_literal(text, indent)
    if _yaml_resolves_to_other(text):
        return quote(text)
    if _plain_allowed(text):
        return text
    if _single_allowed(text):
        return "'" + text.replace("'", "''") + "'"
    return quote(text)


def _yaml_literal(text: str, indent: int) -> str:
    chomp = "-" if not text.endswith("\n") else ("+" if text.endswith("\n\n") or text == "\n" else "")
    lead = str(max(indent, 2)) if text[:1] in " \n" else ""
    pad = " " * max(indent, 2)
    body = text[:-1] if text.endswith("\n") else text
    lines = "\n".join(pad + line if line else "" for line in body.split("\n"))
    return f"|{lead}{chomp}\n{lines}"


_YAML11_SPECIAL = re.compile(
    r"(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"
    r"|~|null|Null|NULL|\.inf|\.Inf|\.INF|[-+]\.inf|[-+]\.Inf|[-+]\.INF|\.nan|\.NaN|\.NAN|<<)"
)
_GO_INT = re.compile(r"[-+]?(?:0[xX]_?[0-9a-fA-F]+(?:_[0-9a-fA-F]+)*|0[oO]_?[0-7]+(?:_[0-7]+)*"
                     r"|0[bB]_?[01]+(?:_[01]+)*|0_?[0-7]+(?:_[0-7]+)*|0|[1-9][0-9]*(?:_[0-9]+)*)")
_YAML_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
_YAML_BINARY = re.compile(r"[-+]?0b[01_]+")
_BASE60 = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")
_TIMESTAMP = re.compile(r"[0-9]{4}-(?:0?[1-9]|1[0-2])-(?:0?[1-9]|[12][0-9]|3[01])"
                        r"(?:[Tt ](?:[01]?[0-9]|2[0-3]):[0-5]?[0-9]:[0-5]?[0-9](?:\.[0-9]{1,9})?"
                        r"(?:Z|[-+][0-9]{2}:[0-9]{2})?)?")


def _yaml_resolves_to_other(text: str) -> bool:
    """yaml.v2 quotes a string that would read back as another type: YAML 1.1 booleans and null, what Go's
    ParseInt (base 0) or a YAML float reads as a number, binary and sexagesimal numbers, timestamps."""
    if text == "" or _YAML11_SPECIAL.fullmatch(text):
        return True
    if text[0] in "+-.0123456789":
        if _GO_INT.fullmatch(text) or _YAML_FLOAT.fullmatch(text) or _YAML_BINARY.fullmatch(text):
            return True
        if _TIMESTAMP.fullmatch(text) or _BASE60.fullmatch(text):
            return True
    return False


_INDICATORS = set("-?:,[]{}#&*!|>'\"%@`")


def _plain_allowed(text: str) -> bool:
    """libyaml's analysis of whether a scalar may be written plain in block context."""
    if text[0] in " \t" or text[-1] in " \t" or text.startswith(("---", "...")):
        return False
    if text[0] in _INDICATORS and not (text[0] in "-?:" and len(text) > 1 and text[1] not in " \t"):
        return False
    if ": " in text or " #" in text or text.endswith(":"):
        return False
    return all(c.isprintable() and c not in "\t" for c in text)


def _single_allowed(text: str) -> bool:
    return all(c.isprintable() for c in text)


class _YamlKey:
    """yaml.v2's key order: numbers before strings, digit runs compared by value, letters after others."""

    def __init__(self, key: Any) -> None:
        self.key = key

    def __lt__(self, other: _YamlKey) -> bool:
        a, b = self.key, other.key
        if not isinstance(a, str) or not isinstance(b, str):
            if isinstance(a, str) != isinstance(b, str):
                return not isinstance(a, str)
            return bool(a < b)
        return _natural_less(a, b)


def _natural_less(a: str, b: str) -> bool:
    for i in range(min(len(a), len(b))):
        if a[i] == b[i]:
            continue
        al, bl = a[i].isalpha(), b[i].isalpha()
        if al and bl:
            return a[i] < b[i]
        if al or bl:
            return bl
        an = bn = 0
        if a[i] == "0" or b[i] == "0":
            j = i - 1
            while j >= 0 and a[j].isdigit():
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(a) and a[ai].isdigit():
            an, ai = an * 10 + int(a[ai]), ai + 1
        bi = i
        while bi < len(b) and b[bi].isdigit():
            bn, bi = bn * 10 + int(b[bi]), bi + 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return a[i] < b[i]
    return len(a) < len(b)
