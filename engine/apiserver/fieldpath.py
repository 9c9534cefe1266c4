"""Field paths and field sets of server-side apply: FieldsV1 encoding, ordering and rendering."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

__all__ = [
    "FieldSet",
    "Path",
    "PathElement",
    "Trie",
    "from_fields_v1",
    "iterate",
    "key_element",
    "name_element",
    "render",
    "to_fields_v1",
    "value_element",
]

# A path element is (prefix, text) exactly as FieldsV1 spells it after the colon:
# ("f", "spec"), ("k", '{"name":"nginx"}'), ("v", '"example.com/x"'), ("i", "3").
PathElement = tuple[str, str]
Path = tuple[PathElement, ...]
FieldSet = frozenset[Path]

_PREFIX_ORDER = {"f": 0, "k": 1, "v": 2, "i": 3}


def compact_json(value: Any) -> str:
    """JSON as Go writes it in field paths: compact, keys sorted, non-ASCII kept."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def name_element(name: str) -> PathElement:
    return ("f", name)


def key_element(keys: Mapping[str, Any]) -> PathElement:
    return ("k", compact_json(dict(keys)))


def value_element(value: Any) -> PathElement:
    return ("v", compact_json(value))


def _value_order(value: Any) -> tuple[Any, ...]:
    """Total order of values as structured-merge-diff sorts them: numbers, strings, bools, lists, maps, null."""
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, int | float):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    if isinstance(value, list):
        return (3, tuple(_value_order(v) for v in value))
    if isinstance(value, dict):
        return (4, tuple((k, _value_order(v)) for k, v in sorted(value.items())))
    return (5,)


@functools.lru_cache(maxsize=1 << 16)
def element_order(element: PathElement) -> tuple[Any, ...]:
    """Sort key of sibling path elements: fields by name, then keys, values and indexes."""
    prefix, text = element
    rank = _PREFIX_ORDER.get(prefix, 4)
    if prefix == "f":
        return (rank, text)
    if prefix == "k":
        keys = json.loads(text)
        return (rank, tuple((name, _value_order(keys[name])) for name in sorted(keys)))
    if prefix == "v":
        return (rank, _value_order(json.loads(text)))
    return (rank, int(text)) if prefix == "i" else (rank, text)


def render_element(element: PathElement) -> str:
    prefix, text = element
    if prefix == "f":
        return "." + text
    if prefix == "k":
        keys = json.loads(text)
        return "[" + ",".join(f"{name}={compact_json(keys[name])}" for name in sorted(keys)) + "]"
    if prefix == "v":
        return f"[={text}]"
    return f"[{text}]"


def render(path: Path) -> str:
    """A path as error messages print it: `.spec.template.spec.containers[name="nginx"].image`."""
    return "".join(render_element(e) for e in path)


class Trie:
    """A field set as a tree: `member` marks paths in the set; children are keyed by path element."""

    __slots__ = ("children", "member")

    def __init__(self, member: bool = False, children: dict[PathElement, Trie] | None = None) -> None:
        self.member = member
        self.children: dict[PathElement, Trie] = {} if children is None else children

    @classmethod
    def of(cls, paths: Iterable[Path]) -> Trie:
        root = cls()
        for path in paths:
            node = root
            for element in path:
                node = node.children.setdefault(element, cls())
            node.member = True
        return root

    def child(self, element: PathElement) -> Trie | None:
        return self.children.get(element)

    def sorted_children(self) -> list[tuple[PathElement, Trie]]:
        return sorted(self.children.items(), key=lambda item: element_order(item[0]))


def to_fields_v1(paths: Iterable[Path]) -> dict[str, Any]:
    """Encode a field set as a FieldsV1 object ("." first, then siblings in element order).

    The subtrees near the root (spec, metadata.labels, status.conditions...) are remembered by the paths below
    them: objects of one template share most of them, so only the parts that differ (an owner's uid, a pod's IP)
    are encoded again. Encoded subtrees are shared, like the stored objects that hold them: never changed."""
    return _encode_level(paths, 0)


MEMO_DEPTH = 2  # subtrees this deep or less are remembered
REMEMBERED_SUBTREES = 8192  # all are forgotten at once beyond that
_SUBTREES: dict[frozenset[Path], dict[str, Any]] = {}


def _encode_level(paths: Iterable[Path], depth: int) -> dict[str, Any]:
    member = False
    below: dict[PathElement, list[Path]] = {}
    for path in paths:
        if path:
            below.setdefault(path[0], []).append(path[1:])
        else:
            member = True
    out: dict[str, Any] = {".": {}} if member and below else {}
    for element in sorted(below, key=element_order):
        out[f"{element[0]}:{element[1]}"] = _subtree(below[element], depth + 1)
    return out


def _subtree(tails: list[Path], depth: int) -> dict[str, Any]:
    if depth > MEMO_DEPTH:
        return _encode_tree(tails)
    key = frozenset(tails)
    found = _SUBTREES.get(key)
    if found is None:
        found = _encode_level(tails, depth)
        if len(_SUBTREES) >= REMEMBERED_SUBTREES:
            _SUBTREES.clear()
        _SUBTREES[key] = found
    return found


def _encode_tree(paths: Iterable[Path]) -> dict[str, Any]:
    root: dict[Any, Any] = {}
    for path in paths:
        node = root
        for element in path:
            node = node.setdefault(element, {})
        node[_MEMBER] = None
    return _encode(root)


_MEMBER = None  # the key that marks, in the tree `to_fields_v1` builds, a path that is in the set


def _encode(node: dict[Any, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if _MEMBER in node and len(node) > 1:
        out["."] = {}
    for element in sorted((k for k in node if k is not _MEMBER), key=element_order):
        out[f"{element[0]}:{element[1]}"] = _encode(node[element])
    return out


def from_fields_v1(tree: Any) -> FieldSet:
    """Decode a FieldsV1 object; ValueError if it is malformed."""
    if not isinstance(tree, dict):
        raise ValueError("fieldsV1 must be an object")
    return frozenset(_decode(tree, ()))


def _decode(tree: Mapping[str, Any], prefix: Path) -> Iterator[Path]:
    for text, sub in tree.items():
        if text == ".":
            continue
        element = _parse_element(text)
        if not isinstance(sub, dict):
            raise ValueError(f"fieldsV1 entry {text!r} must be an object")
        path = (*prefix, element)
        if not sub or "." in sub:
            yield path
        yield from _decode(sub, path)


def _parse_element(text: str) -> PathElement:
    prefix, sep, rest = text.partition(":")
    if not sep or prefix not in _PREFIX_ORDER:
        raise ValueError(f"unknown fieldsV1 key {text!r}")
    if prefix == "k":
        keys = json.loads(rest)
        if not isinstance(keys, dict):
            raise ValueError(f"fieldsV1 key {text!r} is not a JSON object")
        return key_element(keys)
    if prefix == "v":
        return value_element(json.loads(rest))
    if prefix == "i" and not rest.lstrip("-").isdigit():
        raise ValueError(f"fieldsV1 index {text!r} is not a number")
    return (prefix, rest)


def iterate(paths: Iterable[Path]) -> list[Path]:
    """The paths in the order structured-merge-diff iterates a set: at each level members, then subtrees."""
    out: list[Path] = []
    _iterate(Trie.of(paths), (), out)
    return out


def _iterate(node: Trie, prefix: Path, out: list[Path]) -> None:
    ordered = node.sorted_children()
    out.extend((*prefix, element) for element, child in ordered if child.member)
    for element, child in ordered:
        if child.children:
            _iterate(child, (*prefix, element), out)
