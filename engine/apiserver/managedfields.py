"""metadata.managedFields entries: decoding, manager identities, ordering and the cap on Update entries.

Stored objects are never changed once committed, so an entry's JSON is shared by every stored version of an
object whose entry did not change, and decoding it again is a lookup (`_Recent`): a write encodes only the
entries it changed.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from engine.apiserver.fieldpath import FieldSet, from_fields_v1, to_fields_v1

__all__ = ["ANCIENT_CHANGES", "MAX_UPDATE_ENTRIES", "Entry", "cap_updates", "decode", "encode", "is_reset"]

MAX_UPDATE_ENTRIES = 10
ANCIENT_CHANGES = "ancient-changes"
OPERATIONS = ("Apply", "Update")


@dataclass(frozen=True)
class Entry:
    """One manager's field set. Apply identities ignore the apiVersion; Update identities include it."""

    manager: str
    operation: str
    api_version: str
    fields: FieldSet
    time: str | None = None
    subresource: str = ""

    @property
    def identity(self) -> str:
        """The manager identifier of the real server: the entry as JSON without time and fields."""
        return _identity(self.manager, self.operation, self.api_version, self.subresource)

    def describe(self) -> str:
        """The manager as conflict messages print it: `"ctrl" with subresource "status" using v1`."""
        text = json.dumps(self.manager, ensure_ascii=False)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource, ensure_ascii=False)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"manager": self.manager} if self.manager else {}  # Go: `manager,omitempty`
        out.update(operation=self.operation, apiVersion=self.api_version)
        if self.time is not None:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = _fields_v1(self.fields)
        if self.subresource:
            out["subresource"] = self.subresource
        return out


@functools.lru_cache(maxsize=4096)
def _identity(manager: str, operation: str, api_version: str, subresource: str) -> str:
    ident: dict[str, str] = {"manager": manager, "operation": operation}
    if operation != "Apply":
        ident["apiVersion"] = api_version
    if subresource:
        ident["subresource"] = subresource
    return json.dumps(ident, separators=(",", ":"), ensure_ascii=False)


class _Recent:
    """A map of the last `size` values put (older ones are forgotten), safe to share between threads."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._values: dict[Hashable, Any] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        return self._values.get(key)

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._values[key] = value
            if len(self._values) > self._size:
                del self._values[next(iter(self._values))]


RECENT_ENTRIES = 8192
_ENCODED = _Recent(RECENT_ENTRIES)  # Entry → its JSON, as stored objects hold it
_DECODED = _Recent(RECENT_ENTRIES)  # id of that JSON → (the JSON, its Entry)


_FIELDS_V1 = _Recent(RECENT_ENTRIES)  # field set → its FieldsV1 JSON (an entry's time changes more often)


def _fields_v1(fields: FieldSet) -> dict[str, Any]:
    found: dict[str, Any] | None = _FIELDS_V1.get(fields)
    if found is None:
        found = to_fields_v1(fields)
        _FIELDS_V1.put(fields, found)
    return found


def _encoded(entry: Entry) -> dict[str, Any]:
    """The entry's JSON; the same dict for an equal entry encoded before (stored objects share it, unchanged)."""
    found: dict[str, Any] | None = _ENCODED.get(entry)
    if found is None:
        found = entry.to_json()
        _ENCODED.put(entry, found)
        _DECODED.put(id(found), (found, entry))
    return found


def _entry(raw: Any) -> Entry:
    known = _DECODED.get(id(raw))
    if known is not None and known[0] is raw:
        return known[1]  # type: ignore[no-any-return]
    if not isinstance(raw, dict):
        raise ValueError("managedFields entries must be objects")
    operation, api_version, time = raw.get("operation"), raw.get("apiVersion"), raw.get("time")
    if operation not in OPERATIONS:
        raise ValueError("operation must be `Apply` or `Update`")
    if not isinstance(api_version, str) or not api_version:
        raise ValueError("apiVersion must not be empty")
    if raw.get("fieldsType") != "FieldsV1":
        raise ValueError(f"invalid fieldsType {raw.get('fieldsType')!r}")
    if time is not None and not isinstance(time, str):
        raise ValueError("time must be a string")
    fields = raw.get("fieldsV1")
    return Entry(manager=str(raw.get("manager") or ""), operation=operation, api_version=api_version,
                 fields=from_fields_v1(fields) if fields is not None else frozenset(), time=time,
                 subresource=str(raw.get("subresource") or ""))


def decode(raw: Any) -> dict[str, Entry] | None:
    """Entries by identity (a later duplicate wins), or None when the list is malformed."""
    if not isinstance(raw, list):
        return None
    try:
        entries = [_entry(item) for item in raw]
    except ValueError:
        return None
    return {entry.identity: entry for entry in entries}


def is_reset(raw: Any) -> bool:
    """`[]` or `[{}]`: the client asks to drop every entry."""
    return isinstance(raw, list) and (not raw or (len(raw) == 1 and raw[0] == {}))


def _order(entry: Entry) -> tuple[str, str, str, str, str]:
    return (entry.operation, entry.time or "", entry.manager, entry.api_version, entry.subresource)


def encode(entries: Iterable[Entry]) -> list[dict[str, Any]]:
    """Entries with fields, sorted by operation, time, manager, apiVersion, subresource."""
    return [_encoded(e) for e in sorted((e for e in entries if e.fields), key=_order)]


def cap_updates(entries: dict[str, Entry], limit: int = MAX_UPDATE_ENTRIES) -> dict[str, Entry]:
    """Merge the oldest Update entries into one `ancient-changes` entry per apiVersion until `limit` remain."""
    updaters = sorted((e for e in entries.values() if e.operation == "Update"),
                      key=lambda e: (e.time or "", e.identity))
    if len(updaters) <= limit:
        return entries
    out = dict(entries)
    first_of_version: dict[str, Entry] = {}
    count = len(updaters)
    for entry in updaters:
        if count <= limit:
            break
        first = first_of_version.get(entry.api_version)
        if first is None:
            first_of_version[entry.api_version] = entry
            continue
        bucket = Entry(ANCIENT_CHANGES, "Update", entry.api_version, frozenset())
        if bucket.identity not in out:
            out[bucket.identity] = replace(bucket, fields=out.pop(first.identity).fields)
        merged = out[bucket.identity].fields | entry.fields
        out[bucket.identity] = replace(out[bucket.identity], fields=merged, time=entry.time)
        del out[entry.identity]
        count -= 1
    return out
