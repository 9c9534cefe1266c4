"""The parts of a written object identical to the stored object, which the walks of a write need not visit again.

A stored object passed every check of its own write and is never changed once committed, so wherever a new
body repeats it exactly (same JSON types too: `1`, `1.0` and `true` are told apart) the type checks, pruning,
canonical quantities, omitempty and the field-set diff of managedFields find nothing there; they look only at
what differs. Python's `==` is the fast test (C speed), the values' MessagePack bytes the strict one (msgspec, in C:
a float, an integer and a boolean each have markers of their own, and a map's keys keep their order).

A list item counts wherever the stored list holds an identical item, not only at its own index: every item of a
list is checked by the one schema of its items, so an item that passed at one index passes at any (the checks of
the list as a whole, such as its length and unique keys, still run, as the list itself differs). An entry
inserted into a sorted list thus leaves the items after it unchanged.

With `share`, each part found unchanged is replaced in the new body by the stored part itself (below the top level
and `metadata`, which the write changes in place): the rest of the write then compares those parts by identity (a
later walk against the same stored object, the managedFields diff, the no-op check) instead of walking them again.
A stored part is in the set too, so the walks that skip unchanged parts never change one.
"""

from __future__ import annotations

import marshal
from typing import Any

import msgspec

__all__ = ["Unchanged", "identical"]

_PACK = msgspec.msgpack.Encoder()
_MARSHAL_VERSION = 2  # the last format without back-references: equal bytes iff equal values of equal types
_MARSHALLED = b"\xc1"  # a byte MessagePack never writes: marshal's bytes, after it, cannot be taken for msgpack's


def identical(a: Any, b: Any) -> bool:
    """JSON values equal in value, type and key order. `==` goes first: it also tells a list from a tuple, which
    MessagePack writes alike."""
    if a is b:
        return True
    if a != b:
        return False
    found = _bytes(a)
    return found is not None and found == _bytes(b)


def _bytes(value: Any) -> bytes | None:
    """Bytes equal only for equal JSON values of equal types; msgspec's, else (an integer beyond 64 bits) marshal's;
    None for what is not JSON-shaped."""
    try:
        return _PACK.encode(value)
    except (TypeError, ValueError, OverflowError):
        try:
            return _MARSHALLED + marshal.dumps(value, _MARSHAL_VERSION)
        except ValueError:
            return None


class Unchanged:
    """The outermost maps and lists of `new` identical to the stored object's at the same place (a list's items:
    to an item of the stored list). `known`: what an earlier walk of this write found against the very same stored
    object (`old`); its nodes are taken again where they still equal their stored counterpart, without the strict
    test (a write changes nothing it found unchanged: checks and defaults skip those parts). `share`: put the
    stored parts in place of the unchanged parts of `new` (see the module's docstring)."""

    def __init__(self, new: Any, old: Any, known: Unchanged | None = None, *, share: bool = False) -> None:
        self.old = old  # what the nodes were compared with
        self._nodes: dict[int, Any] = {}  # id → the node itself (kept alive, so an id is never reused)
        self._stored: dict[int, Any] = {}  # id of a node → its stored counterpart
        self._known = known if known is not None and known.old is old and known._nodes else None
        self._share = share
        if old is not None:
            self._match(new, old, top=True)
        self._known = None

    def __contains__(self, value: object) -> bool:
        return self._nodes.get(id(value)) is value

    def _take(self, new: Any, old: Any) -> None:
        self._nodes[id(new)] = new
        self._stored[id(new)] = old
        if self._share:  # the stored part, once in the new body in place of `new`, is unchanged there too
            self._nodes[id(old)] = old
            self._stored[id(old)] = old

    def _taken(self, new: Any, old: Any) -> bool:
        """Whether `new` was found identical to `old` itself (so that `old` may stand in its place)."""
        return self._nodes.get(id(new)) is new and self._stored[id(new)] is old

    def _found_before(self, new: Any, old: Any) -> bool:
        known = self._known
        return known is not None and new in known and known._stored[id(new)] is old and new == old

    def _match(self, new: Any, old: Any, top: bool = False) -> None:
        if self._found_before(new, old) or identical(new, old):
            self._take(new, old)
        elif isinstance(new, dict) and isinstance(old, dict):
            for key, value in new.items():
                if isinstance(value, dict | list) and key in old:
                    stored = old[key]
                    self._match(value, stored)
                    if self._share and value is not stored and not (top and key == "metadata") and \
                            self._taken(value, stored):
                        new[key] = stored  # a value replaced, no key added: the iteration goes on
        elif isinstance(new, list) and isinstance(old, list):
            self._match_items(new, old)

    def _match_items(self, new: list[Any], old: list[Any]) -> None:
        """Items identical to the stored one at their index, else to one elsewhere in the stored list."""
        astray: list[tuple[int, Any, Any]] = []  # (index, item, the stored item at its index or None)
        free = old[len(new):]  # stored items not matched where they are
        for i, value in enumerate(new):
            before = old[i] if i < len(old) else None
            if not isinstance(value, dict | list):
                if before is not None:
                    free.append(before)
            elif before is not None and (self._found_before(value, before) or identical(value, before)):
                self._take(value, before)
                if self._share:
                    new[i] = before
            else:
                astray.append((i, value, before))
                if before is not None:
                    free.append(before)
        if astray:
            self._match_astray(new, astray, free)

    def _match_astray(self, new: list[Any], astray: list[tuple[int, Any, Any]], free: list[Any]) -> None:
        stored = {id(item): item for item in free if isinstance(item, dict | list)}
        by_bytes: dict[bytes, Any] | None = None  # the other stored items by their bytes, made when first needed
        for i, value, before in astray:
            known = self._known
            match = None
            if known is not None and value in known and stored.get(id(counterpart := known._stored[id(value)])) \
                    is counterpart and value == counterpart:
                match = counterpart
            elif len(stored) > (before is not None and id(before) in stored):  # `before` is known to differ
                if by_bytes is None:
                    by_bytes = {b: item for item in stored.values() if (b := _strict_bytes(item)) is not None}
                match = by_bytes.get(_strict_bytes(value) or b"")
            if match is not None:
                self._take(value, match)
                if self._share:
                    new[i] = match
            elif before is not None:
                self._match(value, before)


def _strict_bytes(value: Any) -> bytes | None:
    """A JSON map or list's bytes, equal only for equal values of equal types (None for scalars and non-JSON)."""
    return _bytes(value) if isinstance(value, dict | list) else None


NOTHING = Unchanged(None, None)
