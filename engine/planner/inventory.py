"""The inventory (`status.appliedResources`): what kplan applied, for pruning and uninstall."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from engine.planner import ownership
from engine.planner.refs import Ref

__all__ = ["PRUNED_PLANS", "entries", "prunable", "with_applied", "without_foreign", "without_gone"]

Json = dict[str, Any]
PRUNED_PLANS = frozenset({"deploy", "update", "upgrade"})


def entries(status: Mapping[str, Any]) -> list[Json]:
    return [dict(e) for e in status.get("appliedResources") or [] if isinstance(e, Mapping)]


def sort(items: Iterable[Json]) -> list[Json]:
    return sorted(items, key=entry_key)


def entry_key(entry: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """`Ref.of_entry(entry).sort_key`, without building the Ref (every pass sorts the whole inventory twice)."""
    return (str(entry["apiVersion"]), str(entry["kind"]), entry.get("namespace") or "", str(entry["name"]))


def with_applied(items: Sequence[Json], objects: Iterable[Mapping[str, Any]], plan: str) -> list[Json]:
    """The inventory after applying `objects` in `plan` (an object applied again is attributed to `plan`)."""
    by_ref = {Ref.of_entry(e): e for e in items}
    for obj in objects:
        by_ref[Ref.of(obj)] = Ref.of(obj).entry(plan)
    return sort(by_ref.values())


def without_gone(items: Sequence[Json], keep: Collection[Ref], observed: Mapping[Ref, Any]) -> list[Json]:
    """The inventory without objects that are gone and not wanted (wanted ones may just not be observed yet)."""
    return sort(e for e in items if (ref := Ref.of_entry(e)) in observed or ref in keep)


def without_foreign(items: Sequence[Json], observed: Mapping[Ref, Any], namespace: str, name: str) -> list[Json]:
    """The inventory without objects that belong to another Instance now (it adopted them): never deleted here."""
    return [e for e in items if ownership.foreign_claim(observed.get(Ref.of_entry(e)), namespace, name) is None]


def prunable(items: Sequence[Json], keep: Collection[Ref]) -> list[Ref]:
    """Objects applied by deploy/update/upgrade that nothing renders any more."""
    refs = (Ref.of_entry(e) for e in items if e.get("plan") in PRUNED_PLANS)
    return sorted((r for r in refs if r not in keep), key=lambda r: r.sort_key)
