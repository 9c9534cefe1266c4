"""Bounds on what a YAML document may stand for: alias expansion and nesting depth.

An alias repeats its anchor's node, so a kilobyte of aliases of aliases ("billion laughs")
stands for billions of values. PyYAML builds them as shared references, cheap until
something walks them (a schema check, a dump, a copy) and hangs. Every YAML text kplan
reads goes through a loader with `Bounded`, which checks the node graph before building
anything, in time proportional to the text: aliases may add at most `MAX_ALIAS_NODES`
values, no alias may refer to a node that contains it, and nesting stops at `MAX_DEPTH`.
A breach raises `OutOfBounds`, a `ConstructorError` with the line, so a reader that does not
word it itself reports it like any other unreadable file.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["MAX_ALIAS_NODES", "MAX_DEPTH", "Bounded", "BoundedLoader", "OutOfBounds", "check", "load"]

MAX_ALIAS_NODES = 100_000  # values that aliases may add to a document beyond its own nodes
MAX_DEPTH = 128  # mappings and lists inside one another


class OutOfBounds(yaml.constructor.ConstructorError):
    """A document past the bounds; `problem` reads after the file's name ("nests deeper than ...")."""


def check(root: yaml.Node) -> None:
    """Raise OutOfBounds when `root` expands past the bounds; return quietly otherwise."""
    if _is_tree(root):
        return
    _check_graph(root)


def _is_tree(root: yaml.Node) -> bool:
    """True when no node is reached twice (no alias) and nesting is within MAX_DEPTH; a quick walk by levels."""
    seen = {id(root)}
    level = [root]
    for _ in range(MAX_DEPTH):
        level = [child for node in level if isinstance(node, _COLLECTIONS) for child in _children(node)]
        if not level:
            return True
        before = len(seen)
        seen.update(map(id, level))
        if len(seen) != before + len(level):
            return False
    return False


def _check_graph(root: yaml.Node) -> None:
    """The exact check, node by node: expansion sizes, self-reference and depth."""
    sizes: dict[int, int] = {}  # id(node) -> values it expands to, itself included
    depths: dict[int, int] = {}
    open_ids: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            _finish(node, sizes, depths, len(sizes))
            open_ids.discard(key)
            continue
        if key in sizes:
            continue
        if key in open_ids:
            raise _refusal("has an alias that refers to a node containing it", node)
        open_ids.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


def _finish(node: yaml.Node, sizes: dict[int, int], depths: dict[int, int], distinct: int) -> None:
    children = _children(node)
    depth = 1 + max((depths[id(child)] for child in children), default=0) if _is_collection(node) else 0
    if depth > MAX_DEPTH:
        raise _refusal(f"nests deeper than {MAX_DEPTH} levels", node)
    size = 1 + sum(sizes[id(child)] for child in children)
    if size > distinct + 1 + MAX_ALIAS_NODES:
        raise _refusal(f"has aliases that expand to more than {MAX_ALIAS_NODES} values (an alias bomb?)", node)
    sizes[id(node)] = size
    depths[id(node)] = depth


_COLLECTIONS = (yaml.SequenceNode, yaml.MappingNode)


def _is_collection(node: yaml.Node) -> bool:
    return isinstance(node, _COLLECTIONS)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _refusal(reason: str, node: yaml.Node) -> OutOfBounds:
    return OutOfBounds(None, None, reason, node.start_mark)


class Bounded:
    """Mixin for a PyYAML loader (put it first): every document is checked before it is built."""

    def construct_document(self, node: yaml.Node) -> Any:
        check(node)
        return super().construct_document(node)  # type: ignore[misc]


_SAFE: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class BoundedLoader(Bounded, _SAFE):  # type: ignore[valid-type,misc]
    """The safe loader (libyaml's when present) with the bounds."""


def load(text: str) -> Any:
    """`yaml.safe_load` with the bounds."""
    return yaml.load(text, Loader=BoundedLoader)
