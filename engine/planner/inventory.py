"""The inventory (`status.appliedResources`): what kplan applied, for pruning and uninstall."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from engine.planner import ownership
from engine.planner.refs import Ref

__all__ = ["PRUNED_PLANS", "Entry", "entries", "mine", "paired", "present", "prunable", "standing", "with_applied",
           "without_foreign", "without_gone"]

Json = dict[str, Any]
Entry = tuple[Ref, Json]  # an inventory entry with its Ref
PRUNED_PLANS = frozenset({"deploy", "update", "upgrade"})


def entries(status: Mapping[str, Any]) -> list[Json]:
    """The inventory's entries, to read (a pass's status is its own copy: its entries are not copied again)."""
    return [e if e.__class__ is dict else dict(e) for e in status.get("appliedResources") or []
            if e.__class__ is dict or isinstance(e, Mapping)]


def paired(items: Iterable[Json]) -> list[Entry]:
    """Each entry with its Ref (built once: a pass reads the whole inventory several ways)."""
    return [(Ref.of_entry(e), e) for e in items]


def sort(items: Iterable[Json]) -> list[Json]:
    return sorted(items, key=entry_key)


def entry_key(entry: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """`Ref.of_entry(entry).sort_key`, without building the Ref (every pass sorts the whole inventory)."""
    return (str(entry["apiVersion"]), str(entry["kind"]), entry.get("namespace") or "", str(entry["name"]))


def with_applied(items: Sequence[Json], objects: Iterable[Mapping[str, Any]], plan: str) -> list[Entry]:
    """The inventory after applying `objects` in `plan` (an object applied again is attributed to `plan`), unsorted."""
    by_ref = {Ref.of_entry(e): e for e in items}
    for obj in objects:
        ref = Ref.of(obj)
        by_ref[ref] = ref.entry(plan)
    return list(by_ref.items())


def without_gone(items: Sequence[Json], keep: Collection[Ref], observed: Mapping[Ref, Any]) -> list[Json]:
    """The inventory without objects that are gone and not wanted (wanted ones may just not be observed yet)."""
    return present(paired(items), keep, observed)


def present(pairs: Iterable[Entry], keep: Collection[Ref], observed: Mapping[Ref, Any]) -> list[Json]:
    """`without_gone` of entries paired with their Refs: sorted, as the status records it."""
    return sort(e for ref, e in pairs if ref in observed or ref in keep)


def without_foreign(items: Sequence[Json], observed: Mapping[Ref, Any], namespace: str, name: str) -> list[Json]:
    """The inventory without objects that belong to another Instance now (it adopted them): never deleted here."""
    return [e for _, e in mine(paired(items), observed, namespace, name)]


def mine(pairs: Iterable[Entry], observed: Mapping[Ref, Any], namespace: str, name: str) -> list[Entry]:
    """`without_foreign` of entries paired with their Refs."""
    return [(ref, e) for ref, e in pairs if ownership.foreign_claim(observed.get(ref), namespace, name) is None]


def standing(pairs: Iterable[Entry], observed: Mapping[Ref, Any], keep: Collection[Ref], namespace: str,
             name: str) -> tuple[list[Entry], list[Json]]:
    """`mine(pairs, ...)` and `present` of those, reading each object once (every pass reads the whole inventory,
    and a read of the runner's observed view is a call): the entries of Instance `namespace/name`, paired, and
    those of them present or kept, sorted, as the status records them."""
    get, foreign = observed.get, ownership.foreign_claim
    owned: list[Entry] = []
    shown: list[Json] = []
    for ref, entry in pairs:
        live = get(ref)
        if live is not None and foreign(live, namespace, name) is not None:
            continue
        owned.append((ref, entry))
        if live is not None or ref in keep:
            shown.append(entry)
    return owned, sort(shown)


def prunable(pairs: Iterable[Entry], keep: Collection[Ref]) -> list[Ref]:
    """Objects applied by deploy/update/upgrade that nothing renders any more (of entries paired with their Refs)."""
    return sorted((r for r, e in pairs if e.get("plan") in PRUNED_PLANS and r not in keep), key=lambda r: r.sort_key)
