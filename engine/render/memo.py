"""Rendered templates kept between renders, so rendering the same template with the same values is a lookup.

A template's output is a function of its source, the sources it may include (the package's templates), the
variables it sees and the limits it renders under; the memo is keyed by exactly those, so a hit returns what a
render would have. Only successful renders are kept (a failing one raises again on the next render), and every
hit hands out a fresh copy, so a caller may change what it gets.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from engine.jsoncopy import copy_json
from engine.model import Package
from engine.render.cache import Lru
from engine.render.context import RenderContext
from engine.render.limits import Limits

__all__ = ["RenderedTemplates", "frozen", "memo_key", "scene_key"]

Objects = list[dict[str, Any]]


class RenderedTemplates:
    """A bounded, thread-safe, least-recently-used memo of rendered templates: key -> the objects rendered."""

    def __init__(self, capacity: int = 4096) -> None:
        self.hits = 0  # counts for tests and benchmarks; not exact under concurrent use
        self.misses = 0
        self._entries: Lru[Objects] = Lru(capacity)

    def get(self, key: Hashable) -> Objects | None:
        """A copy of what `key` rendered, or None."""
        objects = self._entries.get(key)
        if objects is None:
            self.misses += 1
            return None
        self.hits += 1
        copy: Objects = copy_json(objects)
        return copy

    def put(self, key: Hashable, objects: Objects) -> None:
        self._entries.put(key, copy_json(objects))

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


def scene_key(pkg: Package, ctx: RenderContext, limits: Limits) -> Hashable | None:
    """What every template of a render depends on but its location; None when a value is not plain data
    (such a render is not kept)."""
    try:
        values = frozen(ctx.params), frozen(ctx.pipes)
    except TypeError:
        return None
    package = (pkg.name, pkg.operator_version, pkg.app_version, tuple(pkg.templates.items()))
    return (ctx.instance, ctx.namespace, ctx.instance_uid, values, package, limits)


def memo_key(scene: Hashable, pkg: Package, file: str, ctx: RenderContext) -> Hashable:
    """The key of `file` rendered at `ctx`'s place in the plan, in the scene `scene_key` gave."""
    return (file, pkg.templates.get(file), ctx.plan, ctx.phase, ctx.step, ctx.task, scene)


def frozen(value: Any) -> Hashable:
    """`value` as a hashable key that keeps order and type (1, 1.0 and True stay apart; so do a list and a tuple)."""
    kind = type(value)
    if isinstance(value, Mapping):
        return (kind, tuple((frozen(k), frozen(v)) for k, v in value.items()))
    if kind is list or kind is tuple:
        return (kind, tuple(frozen(item) for item in value))
    if kind in _SCALARS:
        return (kind, value)
    raise TypeError(f"{kind.__name__} is not plain data")


_SCALARS = frozenset({str, int, float, bool, type(None)})
