"""Server-side apply and managedFields bookkeeping of writes, on plain dicts (no HTTP, no store)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from engine.apiserver import managedfields
from engine.apiserver.fieldpath import FieldSet, Path, iterate, render
from engine.apiserver.managedfields import Entry
from engine.apiserver.merging import MISSING, compare, fieldset, merge, prune, same
from engine.apiserver.objects import copy_json
from engine.apiserver.schema import TypeNode

__all__ = ["ApplyConflict", "apply", "same_but_managed_times", "track_update"]

# Paths never tracked (apimachinery stripmeta.go); exact paths only.
_STRIPPED: frozenset[Path] = frozenset(
    {(("f", "apiVersion"),), (("f", "kind"),), (("f", "metadata"),)}
    | {(("f", "metadata"), ("f", name)) for name in (
        "name", "namespace", "creationTimestamp", "selfLink", "uid", "clusterName", "generation", "managedFields",
        "resourceVersion")}
)
# Metadata the server owns: apply keeps the live values whatever the configuration says.
_SERVER_METADATA = ("uid", "resourceVersion", "generation", "creationTimestamp", "selfLink", "deletionTimestamp",
                    "deletionGracePeriodSeconds")


class ApplyConflict(Exception):
    """An apply would change fields other managers own, and force is off."""

    def __init__(self, conflicts: Iterable[tuple[str, str]]) -> None:
        self.conflicts: tuple[tuple[str, str], ...] = tuple(conflicts)
        super().__init__(self.message)

    @property
    def message(self) -> str:
        if len(self.conflicts) == 1:
            manager, path = self.conflicts[0]
            return f"Apply failed with 1 conflict: conflict with {manager}: {path}"
        lines: list[str] = []
        for manager in dict.fromkeys(m for m, _ in self.conflicts):
            lines.append(f"conflicts with {manager}:")
            lines.extend(f"- {path}" for m, path in self.conflicts if m == manager)
        return f"Apply failed with {len(self.conflicts)} conflicts: " + "\n".join(lines)

    def status(self) -> dict[str, Any]:
        causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {manager}", "field": path}
                  for manager, path in self.conflicts]
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": self.message,
                "reason": "Conflict", "details": {"causes": causes}, "code": 409}


def apply(live: dict[str, Any] | None, config: dict[str, Any], *, type_: TypeNode, manager: str, force: bool,
          api_version: str, now: str, subresource: str | None = None, ignored: tuple[str, ...] = ()) -> dict[str, Any]:
    """Server-side apply of `config` by `manager` onto `live` (None = create); see APISERVER §1.5."""
    before = _without_managed_fields(live) if live is not None else {}
    entries = managedfields.decode(_managed_fields(live)) or {}
    applied = _drop(_without_managed_fields(config), ignored)
    owned = _tracked(fieldset(applied, type_), ignored)
    me = Entry(manager, "Apply", api_version, owned, subresource=subresource or "")
    previous = entries.pop(me.identity, None)
    others: FieldSet = frozenset().union(*(e.fields for e in entries.values()))
    after = merge(before, applied, type_)
    if previous is not None:
        after = prune(after, previous.fields - me.fields - others, me.fields | others, type_)
    after = _keep_server_metadata(_reset(after, before, ignored), before)
    diff = compare(before, after, type_)
    entries = _take_ownership(entries, frozenset(diff.added | diff.modified), frozenset(diff.removed), force)
    changed = live is None or not same(before, after)
    entries[me.identity] = replace(me, time=now if changed else previous.time if previous else None)
    return _with_managed_fields(after, entries)


def _take_ownership(entries: dict[str, Entry], changed: FieldSet, removed: FieldSet, force: bool) -> dict[str, Entry]:
    """Other managers lose what the write removed, and (only when forced) what it changed."""
    conflicts = {key: entry.fields & changed for key, entry in entries.items() if not entry.fields.isdisjoint(changed)}
    if conflicts and not force:
        raise ApplyConflict((entries[key].describe(), render(path))
                            for key, paths in sorted(conflicts.items()) for path in iterate(paths))
    return {key: _without(entry, conflicts.get(key, frozenset()) | removed) for key, entry in entries.items()}


def _without(entry: Entry, lost: FieldSet) -> Entry:
    """The entry less the fields it `lost` (the same entry when it owned none of them)."""
    return entry if entry.fields.isdisjoint(lost) else replace(entry, fields=entry.fields - lost)


def track_update(old: dict[str, Any] | None, new: dict[str, Any], *, type_: TypeNode, manager: str, api_version: str,
                 now: str, subresource: str | None = None) -> dict[str, Any]:
    """managedFields of a create/update/patch (non-apply) write: the writer takes what it added or changed."""
    before = _unmanaged_view(old) if old is not None else {}
    after = _unmanaged_view(new)  # `new` is the caller's to give away: what is returned shares its values
    entries = _starting_entries(old, new, subresource)
    diff = compare(before, after, type_)
    taken = _tracked(frozenset(diff.added | diff.modified), ())
    entries = _take_ownership(entries, taken, frozenset(diff.removed), force=True)
    if taken:
        me = Entry(manager, "Update", api_version, taken, time=now, subresource=subresource or "")
        previous = entries.get(me.identity)
        entries[me.identity] = replace(me, fields=taken | previous.fields) if previous else me
    return _with_managed_fields(after, entries)


def _starting_entries(old: Mapping[str, Any] | None, new: Mapping[str, Any], subresource: str | None
                      ) -> dict[str, Entry]:
    """Client-supplied managedFields replace the live ones, except on subresources; `[]`/`[{}]` resets."""
    raw = _managed_fields(old)
    live = managedfields.decode(raw) or {}
    supplied = _managed_fields(new)
    if subresource or supplied is None or supplied == raw:  # equal JSON decodes to equal entries
        return live
    if managedfields.is_reset(supplied):
        return {}
    return managedfields.decode(supplied) or live


def same_but_managed_times(new: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """Whether two objects are equal but for managedFields[*].time (the no-op check of writes); copies nothing."""
    if _unmanaged_view(new) != _unmanaged_view(old):
        return False
    theirs, mine = _managed_fields(new), _managed_fields(old)
    if not isinstance(theirs, list) or not isinstance(mine, list) or len(theirs) != len(mine):
        return bool(theirs == mine)
    return all(_timeless(a) == _timeless(b) for a, b in zip(theirs, mine, strict=True))


def _timeless(entry: Any) -> Any:
    return {k: v for k, v in entry.items() if k != "time"} if isinstance(entry, dict) else entry


def _managed_fields(obj: Mapping[str, Any] | None) -> Any:
    metadata = obj.get("metadata") if obj else None
    return metadata.get("managedFields") if isinstance(metadata, dict) else None


def _unmanaged_view(obj: Mapping[str, Any]) -> dict[str, Any]:
    """`obj` without metadata.managedFields, sharing everything else with it (new top level and metadata only)."""
    out = dict(obj)
    metadata = out.get("metadata")
    if isinstance(metadata, dict) and "managedFields" in metadata:
        out["metadata"] = {k: v for k, v in metadata.items() if k != "managedFields"}
    elif isinstance(metadata, dict):
        out["metadata"] = dict(metadata)
    return out


def _without_managed_fields(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {name: {k: copy_json(v) for k, v in value.items() if k != "managedFields"}
            if name == "metadata" and isinstance(value, dict) else copy_json(value) for name, value in obj.items()}


def _with_managed_fields(obj: dict[str, Any], entries: dict[str, Entry]) -> dict[str, Any]:
    encoded = managedfields.encode(managedfields.cap_updates(entries).values())
    if encoded:
        obj.setdefault("metadata", {})["managedFields"] = encoded
    elif isinstance(obj.get("metadata"), dict):
        obj["metadata"].pop("managedFields", None)
    return obj


def _tracked(paths: FieldSet | set[Path], ignored: tuple[str, ...]) -> FieldSet:
    """Without the paths nobody may own: stripped metadata and reset (ignored) fields with all below them."""
    prefixes = [tuple(("f", name) for name in dotted.split(".")) for dotted in ignored]
    return frozenset(p for p in paths if p not in _STRIPPED and not any(p[:len(q)] == q for q in prefixes))


def _split(dotted: str) -> tuple[list[str], str]:
    *parents, last = dotted.split(".")
    return parents, last


def _drop(obj: dict[str, Any], ignored: tuple[str, ...]) -> dict[str, Any]:
    """The configuration without reset fields (already a private copy)."""
    for dotted in ignored:
        parents, last = _split(dotted)
        holder = _lookup(obj, parents)
        if isinstance(holder, dict):
            holder.pop(last, None)
    return obj


def _reset(obj: dict[str, Any], live: dict[str, Any], ignored: tuple[str, ...]) -> dict[str, Any]:
    """Reset fields take their live values (or stay absent)."""
    for dotted in ignored:
        parents, last = _split(dotted)
        source = _lookup(live, parents)
        value = source.get(last, MISSING) if isinstance(source, dict) else MISSING
        holder = _lookup(obj, parents, create=value is not MISSING)
        if isinstance(holder, dict):
            if value is MISSING:
                holder.pop(last, None)
            else:
                holder[last] = copy_json(value)
    return obj


def _lookup(obj: Any, names: list[str], create: bool = False) -> Any:
    for name in names:
        if not isinstance(obj, dict):
            return None
        if create and not isinstance(obj.get(name), dict):
            obj[name] = {}
        obj = obj.get(name)
    return obj


def _keep_server_metadata(obj: dict[str, Any], live: dict[str, Any]) -> dict[str, Any]:
    live_meta, meta = live.get("metadata"), obj.get("metadata")
    if isinstance(live_meta, dict) and isinstance(meta, dict):
        for name in _SERVER_METADATA:
            if name in live_meta:
                meta[name] = copy_json(live_meta[name])
            else:
                meta.pop(name, None)
    return obj
