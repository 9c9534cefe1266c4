"""Which stored custom resources passed the schema walks of their own write, and through which schema.

The walks of a write (pruning, type checks, defaults, validation) skip the parts identical to the stored object
(`Unchanged`): the stored object passed them when it was written. A built-in kind's schema never changes, so
that always holds for it; a custom resource's schema changes with its CRD and differs between the CRD's versions,
so it holds only for an object written through the very schema (the same dict: stored CRDs never change) that
checks the new write. Objects stored by other paths (deletion's metadata writes) are not recorded: their next
write is walked whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.apiserver.objects import JsonDict
from engine.apiserver.store import ADDED, Event

__all__ = ["CheckedObjects"]


class CheckedObjects:
    """Stored objects (by identity) and the schema each passed through; forgets an object once replaced."""

    def __init__(self) -> None:
        self._schemas: dict[int, tuple[JsonDict, Mapping[str, Any]]] = {}  # id → (object, schema), both kept

    def record(self, stored: JsonDict, schema: Mapping[str, Any]) -> None:
        """`stored` was just committed by a write that passed `schema`'s walks."""
        self._schemas[id(stored)] = (stored, schema)

    def passed(self, stored: JsonDict, schema: Mapping[str, Any]) -> bool:
        """Whether `stored` (as the store holds it) was written through `schema`."""
        known = self._schemas.get(id(stored))
        return known is not None and known[0] is stored and known[1] is schema

    def on_commit(self, event: Event) -> None:
        """A store hook: the state a change replaced or deleted is no longer stored."""
        if event.type != ADDED and event.old is not None:
            known = self._schemas.get(id(event.old))
            if known is not None and known[0] is event.old:
                del self._schemas[id(event.old)]

    def __len__(self) -> int:
        return len(self._schemas)
