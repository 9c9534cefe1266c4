"""Drift: whether a live object still holds every field kplan rendered (subset match), and where it first differs."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from engine import quantity

__all__ = ["first_difference"]

MISSING: Any = object()
ZEROS = ("", 0, False, None)  # values the API server leaves out of what it returns
# Where an object was last applied from: two steps applying one object must not undo each other forever.
BOOKKEEPING = frozenset({"kplan.dev/plan", "kplan.dev/step"})


def first_difference(rendered: Mapping[str, Any], live: Mapping[str, Any]) -> str | None:
    """The path of the first rendered field the live object lacks or holds differently, or None.

    Maps match when every rendered key matches (the live object may have more); lists match
    element by element and must have the same length; scalars match when equal, equal as text, or
    the same Kubernetes quantity.
    `status` is not kplan's to set, the plan and step annotations are bookkeeping, and a Secret's
    `stringData` is compared with its `data`.
    """
    return difference(comparable(rendered), live, "")


def comparable(obj: Mapping[str, Any]) -> dict[str, Any]:
    want = {k: v for k, v in obj.items() if k != "status"}
    meta = dict(want.get("metadata") or {})
    if isinstance(meta.get("annotations"), Mapping):
        meta["annotations"] = {k: v for k, v in meta["annotations"].items() if k not in BOOKKEEPING}
        want["metadata"] = meta
    if obj.get("kind") == "Secret" and isinstance(obj.get("stringData"), Mapping):
        encoded = {k: base64.b64encode(str(v).encode()).decode() for k, v in obj["stringData"].items()}
        want["data"] = {**(obj.get("data") or {}), **encoded}
        del want["stringData"]
    return want


def difference(want: Any, have: Any, path: str) -> str | None:
    if want.__class__ is dict or isinstance(want, Mapping):  # a plain dict skips the ABC's check
        return map_difference(want, have, path)
    if isinstance(want, list):
        return list_difference(want, have, path)
    return None if same(want, have) else path or "."


def map_difference(want: Mapping[str, Any], have: Any, path: str) -> str | None:
    if have is MISSING and not want:
        return None
    if not (have.__class__ is dict or isinstance(have, Mapping)):
        return path or "."
    for key in sorted(want, key=str):
        found = difference(want[key], have.get(key, MISSING), f"{path}.{key}" if path else str(key))
        if found:
            return found
    return None


def list_difference(want: list[Any], have: Any, path: str) -> str | None:
    if have is MISSING and not want:
        return None
    if not isinstance(have, list) or len(have) != len(want):
        return path or "."
    for index, (w, h) in enumerate(zip(want, have, strict=True)):
        found = difference(w, h, f"{path}[{index}]")
        if found:
            return found
    return None


def same(want: Any, have: Any) -> bool:
    if have is MISSING:
        return want in ZEROS and not isinstance(want, float)
    if isinstance(want, bool) or isinstance(have, bool):
        return want is have
    if bool(want == have) or str(want) == str(have):
        return True
    return same_quantity(want, have)


def same_quantity(want: Any, have: Any) -> bool:
    """Whether the server may have stored the quantity `want` as `have`: the same amount (`0.5` → `500m`,
    `1024Mi` → `1Gi`), or that amount rounded up to the milliunit as ResourceLists are (`1.5m` → `2m`)."""
    if not isinstance(want, str | int | float) or not isinstance(have, str | int | float):
        return False
    try:
        wanted, stored = quantity.parse(str(want).strip()), quantity.parse(str(have).strip())
    except quantity.QuantityError:
        return False
    return stored.value in (wanted.value, wanted.round_up().value)
