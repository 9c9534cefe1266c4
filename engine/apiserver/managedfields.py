"""metadata.managedFields entries: decoding, manager identities, ordering and the cap on Update entries."""

from __future__ import annotations

import json
from collections.abc import Iterable
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
        ident: dict[str, str] = {"manager": self.manager, "operation": self.operation}
        if self.operation != "Apply":
            ident["apiVersion"] = self.api_version
        if self.subresource:
            ident["subresource"] = self.subresource
        return json.dumps(ident, separators=(",", ":"), ensure_ascii=False)

    def describe(self) -> str:
        """The manager as conflict messages print it: `"ctrl" with subresource "status" using v1`."""
        text = json.dumps(self.manager, ensure_ascii=False)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource, ensure_ascii=False)}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"manager": self.manager, "operation": self.operation, "apiVersion": self.api_version}
        if self.time is not None:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = to_fields_v1(self.fields)
        if self.subresource:
            out["subresource"] = self.subresource
        return out


def _entry(raw: Any) -> Entry:
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
    return [e.to_json() for e in sorted((e for e in entries if e.fields), key=_order)]


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
