"""Comparing objects for `kplan diff`: server bookkeeping stripped, Secret data masked, YAML diffs, drifted fields."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.cli.output import dump_yaml
from engine.planner.drift import comparable

__all__ = ["Drift", "drifted", "masked", "stripped", "unified"]

MASK = "*****"
SERVER_FIELDS = ("managedFields", "resourceVersion", "generation", "creationTimestamp", "uid", "selfLink",
                 "deletionTimestamp", "deletionGracePeriodSeconds")
Json = dict[str, Any]


def stripped(obj: Mapping[str, Any] | None) -> Json | None:
    """The object without status and the metadata the server keeps for itself (versions, timestamps, owners)."""
    if obj is None:
        return None
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in SERVER_FIELDS}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}


def masked(before: Json | None, after: Json | None) -> tuple[Json | None, Json | None]:
    """Secret values replaced by a mask, marked `(before)`/`(after)` where they differ, like `kubectl diff`."""
    if not is_secret(before) and not is_secret(after):
        return before, after
    old, new = secret_data(before), secret_data(after)
    marks_old = {k: MASK if new.get(k) == v else f"{MASK} (before)" for k, v in old.items()}
    marks_new = {k: MASK if old.get(k) == v else f"{MASK} (after)" for k, v in new.items()}
    return with_data(before, marks_old), with_data(after, marks_new)


def is_secret(obj: Mapping[str, Any] | None) -> bool:
    return obj is not None and obj.get("kind") == "Secret" and str(obj.get("apiVersion")) == "v1"


def secret_data(obj: Mapping[str, Any] | None) -> dict[str, Any]:
    """`data` with `stringData` folded in as the server would store it (compared, never shown)."""
    return dict(comparable(obj).get("data") or {}) if obj is not None else {}


def with_data(obj: Json | None, data: Mapping[str, str]) -> Json | None:
    if obj is None:
        return None
    shown = {k: v for k, v in obj.items() if k != "stringData"}
    if data:
        shown["data"] = dict(sorted(data.items()))
    return shown


def unified(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None, name: str) -> str:
    """A unified diff of the two objects as YAML ('' when equal); an absent side is empty."""
    old = dump_yaml(before).splitlines(keepends=True) if before is not None else []
    new = dump_yaml(after).splitlines(keepends=True) if after is not None else []
    return "".join(difflib.unified_diff(old, new, fromfile=f"live/{name}", tofile=f"kplan/{name}"))


@dataclass(frozen=True)
class Drift:
    """A field kplan applies whose live value differs (`live` is None when the field is missing)."""

    path: str
    applied: Any
    live: Any


MISSING: Any = object()


def drifted(rendered: Mapping[str, Any], live: Mapping[str, Any]) -> list[Drift]:
    """Every field of the rendered object (as kplan applies it) that the live object lacks or holds differently.

    A Secret's `stringData` counts as the `data` it stands for, on both sides.
    """
    found: list[Drift] = []
    walk(comparable(rendered), comparable(live) if is_secret(live) else live, "", found)
    return found


def walk(want: Any, have: Any, path: str, found: list[Drift]) -> None:
    if isinstance(want, Mapping) and isinstance(have, Mapping):
        for key in sorted(want, key=str):
            walk(want[key], have.get(key, MISSING), f"{path}.{key}", found)
    elif isinstance(want, list) and isinstance(have, list) and len(want) == len(have):
        for index, (w, h) in enumerate(zip(want, have, strict=True)):
            walk(w, h, f"{path}[{index}]", found)
    elif not same(want, have):
        found.append(Drift(path or ".", want, None if have is MISSING else have))


def same(want: Any, have: Any) -> bool:
    if have is MISSING:
        return want in ("", 0, False, None, {}, []) and not isinstance(want, float)
    if isinstance(want, bool) or isinstance(have, bool):
        return want is have
    return bool(want == have) or (not isinstance(want, Mapping | list) and str(want) == str(have))
