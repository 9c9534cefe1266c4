"""Go's way of turning values into text: fmt's %v and printf verbs, strconv's floats, yaml.v2's Marshal.

Converted KUDO templates print values the way Go's text/template did, so the same parameters
give the same manifest: `[a b]` for a list, `map[k:v]` for a map (keys sorted), `1e+06` for a
large float, `<no value>` for a missing one. Values are what kplan renders with: str, int,
float, bool, None, lists and mappings.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

__all__ = ["GoError", "format_float", "printf", "sprint", "sprintln", "value_text", "yaml_marshal"]


class GoError(Exception):
    """What Go's text/template or a sprig function would have failed with."""


def format_float(value: float, verb: str = "g", precision: int = -1) -> str:
    """strconv.FormatFloat(value, verb, precision, 64) for the verbs e, f and g."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if verb == "f":
        return f"{value:.{precision}f}" if precision >= 0 else _shortest_fixed(value)
    if verb == "e":
        return _go_exponent(f"{value:.{precision}e}" if precision >= 0 else _shortest_exp(value))
    if precision >= 0:
        return _go_exponent(f"{value:.{max(precision, 1)}g}")
    _digits, exponent = _shortest_digits(value)
    if exponent < -4 or exponent >= 6:  # strconv: shortest %g switches to %e from exponent 6
        return _go_exponent(_shortest_exp(value))
    return _shortest_fixed(value)


def _shortest_digits(value: float) -> tuple[str, int]:
    _sign, digits, exp = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits)) or "0"
    return text, len(text) + int(exp) - 1 if value != 0 else 0


def _shortest_fixed(value: float) -> str:
    text = format(Decimal(repr(value)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" and math.copysign(1, value) > 0 else text


def _shortest_exp(value: float) -> str:
    digits, exponent = _shortest_digits(value)
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{'-' if value < 0 else ''}{mantissa}e{exponent:+d}"


def _go_exponent(text: str) -> str:
    """Python's `1e+6` / `1e+06` as Go writes it: at least two exponent digits."""
    match = re.fullmatch(r"(.*e)([+-])(\d+)", text)
    if match is None:
        return text
    return f"{match.group(1)}{match.group(2)}{int(match.group(3)):02d}"


def value_text(value: Any, top: bool = True) -> str:
    """fmt's %v of a template value; at the top of an action a missing value prints `<no value>`."""
    if value is None:
        return "<no value>" if top else "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, Mapping):
        items = " ".join(f"{value_text(k, False)}:{value_text(value[k], False)}" for k in sorted(value, key=_key))
        return f"map[{items}]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(value_text(v, False) for v in value) + "]"
    return str(value)


def _key(key: Any) -> tuple[int, Any]:
    return (0, key) if isinstance(key, int | float) and not isinstance(key, bool) else (1, str(key))


def sprint(*args: Any) -> str:
    """fmt.Sprint: a space between operands when neither is a string."""
    out: list[str] = []
    for i, arg in enumerate(args):
        if i > 0 and not isinstance(arg, str) and not isinstance(args[i - 1], str):
            out.append(" ")
        out.append(value_text(arg, False))
    return "".join(out)


def sprintln(*args: Any) -> str:
    return " ".join(value_text(a, False) for a in args) + "\n"


_VERB = re.compile(r"%([-+# 0]*)(\d+|\*)?(?:\.(\d+|\*)?)?([a-zA-Z%])")


def printf(template: str, *args: Any) -> str:
    """fmt.Sprintf for the verbs templates use: %v %s %d %q %t %f %e %g %x %X %o %b %c and %%."""
    out: list[str] = []
    pos, arg_index = 0, 0
    for match in _VERB.finditer(template):
        out.append(template[pos:match.start()])
        pos = match.end()
        flags, width, precision, verb = match.group(1), match.group(2), match.group(3), match.group(4)
        if verb == "%":
            out.append("%")
            continue
        if arg_index >= len(args):
            out.append(f"%!{verb}(MISSING)")
            continue
        arg = args[arg_index]
        arg_index += 1
        text = _verb(verb, arg, flags, None if precision is None else int(precision or 0))
        out.append(_pad(text, flags, int(width) if width and width != "*" else 0, verb))
    out.append(template[pos:])
    if arg_index < len(args):
        extra = ", ".join(f"{_go_type(a)}={value_text(a, False)}" for a in args[arg_index:])
        out.append(f"%!(EXTRA {extra})")
    return "".join(out)


def _verb(verb: str, arg: Any, flags: str, precision: int | None) -> str:
    if verb in "vs":
        text = format_float(arg, "g") if isinstance(arg, float) else value_text(arg, False)
        return text[:precision] if verb == "s" and precision is not None else text
    if verb == "q":
        return quote(value_text(arg, False)) if not isinstance(arg, int) or isinstance(arg, bool) else f"'{chr(arg)}'"
    if verb == "t" and isinstance(arg, bool):
        return "true" if arg else "false"
    if verb in "dxXobc" and isinstance(arg, int) and not isinstance(arg, bool):
        return _integer(verb, arg, flags)
    if verb in "xX" and isinstance(arg, str):
        text = arg.encode().hex()
        return text.upper() if verb == "X" else text
    if verb in "feEgG" and isinstance(arg, int | float) and not isinstance(arg, bool):
        text = format_float(float(arg), verb.lower(), -1 if precision is None and verb in "gG" else
                            (6 if precision is None else precision))
        text = ("+" + text) if "+" in flags and not text.startswith("-") else text
        return text.upper() if verb in "EG" else text
    return f"%!{verb}({_go_type(arg)}={value_text(arg, False)})"


def _integer(verb: str, arg: int, flags: str) -> str:
    if verb == "c":
        return chr(arg)
    base = {"d": "d", "x": "x", "X": "X", "o": "o", "b": "b"}[verb]
    text = format(abs(arg), base)
    if "#" in flags and verb in "xX":
        text = ("0x" if verb == "x" else "0X") + text
    sign = "-" if arg < 0 else ("+" if "+" in flags else (" " if " " in flags else ""))
    return sign + text


def _pad(text: str, flags: str, width: int, verb: str) -> str:
    if len(text) >= width:
        return text
    if "-" in flags:
        return text.ljust(width)
    if "0" in flags and verb in "dxXobfeEgG":
        sign = text[0] if text[:1] in "+- " else ""
        return sign + text[len(sign):].rjust(width - len(sign), "0")
    return text.rjust(width)


def _go_type(value: Any) -> str:
    if value is None:
        return "<nil>"
    return {bool: "bool", int: "int", float: "float64", str: "string"}.get(type(value), "interface {}")


def quote(text: str) -> str:
    """strconv.Quote: a double-quoted Go string literal."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif not char.isprintable():
            out.append(f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


_SHORT_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


# -- yaml.v2's Marshal (what KUDO's toYaml returns)

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
