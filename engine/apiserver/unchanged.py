"""The parts of a written object identical to the stored object, which the walks of a write need not visit again.

A stored object passed every check of its own write and is never changed once committed, so wherever a new
body repeats it exactly (same JSON types too: `1`, `1.0` and `true` are told apart) the type checks, pruning,
canonical quantities, omitempty and the field-set diff of managedFields find nothing there; they look only at
what differs. Python's `==` is the fast test (C speed), marshal's bytes the strict one.
"""

from __future__ import annotations

import marshal
from typing import Any

__all__ = ["Unchanged", "identical"]

_MARSHAL_VERSION = 2  # the last format without back-references: equal bytes iff equal values of equal types


def identical(a: Any, b: Any) -> bool:
    """JSON values equal in value, type and key order."""
    if a is b:
        return True
    if a != b:
        return False
    try:
        return marshal.dumps(a, _MARSHAL_VERSION) == marshal.dumps(b, _MARSHAL_VERSION)
    except ValueError:  # not JSON-shaped
        return False


class Unchanged:
    """The outermost maps and lists of `new` identical to the stored object's at the same place."""

    def __init__(self, new: Any, old: Any) -> None:
        self._nodes: dict[int, Any] = {}  # id → the node itself (kept alive, so an id is never reused)
        if old is not None:
            self._match(new, old)

    def __contains__(self, value: object) -> bool:
        return self._nodes.get(id(value)) is value

    def _match(self, new: Any, old: Any) -> None:
        if identical(new, old):
            self._nodes[id(new)] = new
        elif isinstance(new, dict) and isinstance(old, dict):
            for key, value in new.items():
                if isinstance(value, dict | list) and key in old:
                    self._match(value, old[key])
        elif isinstance(new, list) and isinstance(old, list):
            for value, before in zip(new, old, strict=False):
                if isinstance(value, dict | list):
                    self._match(value, before)


NOTHING = Unchanged(None, None)
