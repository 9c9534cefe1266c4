"""An Instance being deleted whose package is gone (or invalid): its inventory is removed without a cleanup plan.

Deleting a namespace deletes the OperatorVersions in it at once, while Instances wait for their finalizer;
without this, such an Instance (and so its namespace) would never go away.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.planner import FINALIZER, Action, Delete, Ref, RemoveFinalizer, inventory

__all__ = ["UNINSTALL_STEP", "orphan_actions", "stranded"]

UNINSTALL_STEP = "uninstall"


def stranded(instance: Mapping[str, Any]) -> bool:
    """Being deleted and still held by kplan's finalizer."""
    meta = instance.get("metadata") or {}
    return bool(meta.get("deletionTimestamp")) and FINALIZER in (meta.get("finalizers") or [])


def orphan_actions(instance: Mapping[str, Any], observed: Mapping[Ref, Any]) -> tuple[Action, ...]:
    """Delete what the inventory lists and is still there (but what another Instance adopted); once nothing is,
    release the Instance."""
    meta = instance.get("metadata") or {}
    entries = ((instance.get("status") or {}).get("appliedResources")) or []
    mine = inventory.without_foreign(entries, observed, str(meta.get("namespace") or ""), str(meta.get("name") or ""))
    present = tuple(ref for ref in (Ref.of_entry(e) for e in mine) if ref in observed)
    return (Delete(UNINSTALL_STEP, present),) if present else (RemoveFinalizer(),)
