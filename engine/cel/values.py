"""Object data as CEL sees it under an OpenAPI schema: escaped property names.

As k8s.io/apiserver pkg/cel escaping.go: a property named `namespace` is `self.__namespace__`, `foo-bar` is
`self.foo__dash__bar`; map keys (additionalProperties) stay as they are. (Strings of format date-time or
duration stay strings: the CEL runtime takes no timestamps or durations as data.)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["RESERVED", "escape", "to_cel"]

Schema = Mapping[str, Any]
RESERVED = frozenset({"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function",
                      "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"})
_ESCAPES = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}
_ESCAPABLE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_./-]*$")


def escape(name: str) -> str | None:
    """The CEL name of a property, or None when it cannot be named in CEL."""
    if name in RESERVED:
        return f"__{name}__"
    if not _ESCAPABLE.match(name):
        return None
    return re.sub(r"__|[./-]", lambda m: _ESCAPES[m.group(0)], name)


def to_cel(schema: Schema | None, value: Any) -> Any:
    """`value` with its properties under their CEL names (unchanged where no schema is known)."""
    if schema is None or value is None:
        return value
    if isinstance(value, dict):
        properties = schema.get("properties")
        if isinstance(properties, Mapping) and properties:
            return {escaped: to_cel(properties.get(k), v) for k, v in value.items()
                    if (escaped := escape(k)) is not None}
        extra = schema.get("additionalProperties")
        return {k: to_cel(extra if isinstance(extra, Mapping) else None, v) for k, v in value.items()}
    if isinstance(value, list):
        items = schema.get("items")
        return [to_cel(items if isinstance(items, Mapping) else None, v) for v in value]
    return value
