"""Go's way of turning values into text: fmt's %v and printf verbs, strconv's floats and quoting.

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

__all__ = ["GoError", "format_float", "printf", "quote", "sprint", "sprintln", "value_text"]


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
