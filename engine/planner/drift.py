"""Drift: whether a live object still holds every field kplan rendered (subset match), and where it first differs."""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["first_difference"]

MISSING: Any = object()
ZEROS = ("", 0, False, None)  # values the API server leaves out of what it returns
# Where an object was last applied from: two steps applying one object must not undo each other forever.
BOOKKEEPING = frozenset({"kplan.dev/plan", "kplan.dev/step"})
# Kubernetes quantities: the API server returns "0.5" as "500m" and "1024Mi" as "1Gi".
QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")
SUFFIXES = {"m": Decimal("0.001"), "k": Decimal(10) ** 3, "M": Decimal(10) ** 6, "G": Decimal(10) ** 9,
            "T": Decimal(10) ** 12, "P": Decimal(10) ** 15, "E": Decimal(10) ** 18, "Ki": Decimal(2) ** 10,
            "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30, "Ti": Decimal(2) ** 40, "Pi": Decimal(2) ** 50,
            "Ei": Decimal(2) ** 60}


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
    if isinstance(want, Mapping):
        return map_difference(want, have, path)
    if isinstance(want, list):
        return list_difference(want, have, path)
    return None if same(want, have) else path or "."


def map_difference(want: Mapping[str, Any], have: Any, path: str) -> str | None:
    if have is MISSING and not want:
        return None
    if not isinstance(have, Mapping):
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
    return quantity(want) is not None and quantity(want) == quantity(have)


def quantity(value: Any) -> Decimal | None:
    """The amount a Kubernetes quantity (`500m`, `1Gi`, `2`, `0.5`) stands for, or None."""
    match = QUANTITY.match(str(value)) if isinstance(value, str | int | float) else None
    if match is None:
        return None
    try:
        return Decimal(match[1]) * SUFFIXES.get(match[2] or "", Decimal(1))
    except InvalidOperation:
        return None
