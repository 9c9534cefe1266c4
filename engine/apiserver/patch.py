"""The three non-apply PATCH types: JSON merge patch, JSON patch and strategic merge patch."""

from __future__ import annotations

from typing import Any

import jsonpatch
import jsonpointer

from engine.apiserver.merging import same
from engine.apiserver.objects import copy_json
from engine.apiserver.schema import ANY, TypeNode

__all__ = ["MAX_JSON_PATCH_OPERATIONS", "PatchError", "PatchTooLarge", "json_patch", "merge_patch",
           "strategic_merge_patch"]

MAX_JSON_PATCH_OPERATIONS = 10000
_PATCH = "$patch"
_RETAIN_KEYS = "$retainKeys"
_SET_ORDER = "$setElementOrder/"
_DELETE_FROM = "$deleteFromPrimitiveList/"


class PatchError(Exception):
    """The patch does not apply; the message suits a 400/422 Status."""


class PatchTooLarge(PatchError):
    """A JSON patch with more operations than the server accepts (413)."""


def merge_patch(live: dict[str, Any], patch: Any) -> dict[str, Any]:
    """RFC 7386: objects merge recursively, null deletes, anything else (lists too) replaces."""
    if not isinstance(patch, dict):
        raise PatchError("Invalid JSON Patch")
    result = _merge_patch(copy_json(live), patch)
    assert isinstance(result, dict)
    return result


def _merge_patch(target: Any, patch: Any) -> Any:
    """The patch merged into `target`, which it changes (a copy of its own)."""
    if not isinstance(patch, dict):
        return copy_json(patch)
    out = target if isinstance(target, dict) else {}
    for name, value in patch.items():
        if value is None:
            out.pop(name, None)
        else:
            out[name] = _merge_patch(out.get(name), value)
    return out


def json_patch(live: dict[str, Any], ops: Any) -> dict[str, Any]:
    """RFC 6902 operations applied in order; any failing operation fails the whole patch."""
    if not isinstance(ops, list):
        raise PatchError("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise PatchTooLarge(f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, "
                            f"got: {len(ops)}")
    try:
        result = jsonpatch.JsonPatch(ops).apply(copy_json(live), in_place=True)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError, ValueError) as exc:
        raise PatchError(str(exc)) from exc
    if not isinstance(result, dict):
        raise PatchError("the patched document is not an object")
    return result


def strategic_merge_patch(live: dict[str, Any], patch: dict[str, Any], type_: TypeNode) -> dict[str, Any]:
    """Strategic merge patch: lists with patchStrategy merge are merged by their patchMergeKey, others replaced."""
    if not isinstance(patch, dict):
        raise PatchError("strategic merge patch must be a JSON object")
    return _merge_map(copy_json(live), copy_json(patch), type_)


def _strategies(type_: TypeNode) -> list[str]:
    return (type_.patch_strategy or "").split(",")


def _merge_map(original: dict[str, Any], patch: dict[str, Any], type_: TypeNode) -> dict[str, Any]:
    directive = patch.pop(_PATCH, None)
    if directive == "replace":
        return _merge_map({}, patch, type_)
    if directive == "delete":
        return {}
    if directive not in (None, "merge"):
        raise PatchError(f"unknown patch type: {directive} in map: {patch}")
    original = _retain_keys(original, patch)
    orders = _pop_prefixed(patch, _SET_ORDER)
    for name, values in _pop_prefixed(patch, _DELETE_FROM).items():
        if isinstance(original.get(name), list) and isinstance(values, list):
            original[name] = [v for v in original[name] if not any(same(v, d) for d in values)]
    before = {name: original.get(name) for name in orders}
    for name, value in patch.items():
        _merge_field(original, name, value, type_.field(name))
    for name, order in orders.items():
        if isinstance(original.get(name), list) and isinstance(order, list):
            original[name] = _ordered(original[name], order, before[name] or [], type_.field(name).patch_merge_key)
    return original


def _merge_field(original: dict[str, Any], name: str, value: Any, type_: TypeNode) -> None:
    current = original.get(name)
    if value is None:
        original.pop(name, None)
    elif isinstance(current, dict) and isinstance(value, dict) and "replace" not in _strategies(type_):
        original[name] = _merge_map(current, value, type_)
    elif isinstance(current, list) and isinstance(value, list):
        original[name] = _merge_list(current, value, type_)
    else:
        original[name] = _new_value(value, type_)


def _new_value(value: Any, type_: TypeNode) -> Any:
    """A value the original lacks: its directives are carried out against nothing, its nulls dropped."""
    if isinstance(value, dict):
        return _merge_map({}, value, type_)
    if isinstance(value, list):
        return _merge_list([], value, type_)
    return value


def _pop_prefixed(patch: dict[str, Any], prefix: str) -> dict[str, Any]:
    return {name[len(prefix):]: patch.pop(name) for name in [n for n in patch if n.startswith(prefix)]}


def _retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """`$retainKeys`: drop the original's other keys; every key the patch sets must be listed."""
    retain = patch.pop(_RETAIN_KEYS, None)
    if retain is None:
        return original
    if not isinstance(retain, list):
        raise PatchError("invalid patch format of retainKeys")
    for name, value in patch.items():
        if value is not None and not name.startswith((_SET_ORDER, _DELETE_FROM)) and name not in retain:
            raise PatchError("invalid patch format of retainKeys")
    return {name: value for name, value in original.items() if name in retain}


def _merge_list(original: list[Any], patch: list[Any], type_: TypeNode) -> list[Any]:
    """Lists merge only with patchStrategy merge; the result follows the patch's order (apimachinery rules)."""
    elem = type_.elem or ANY
    if "merge" not in _strategies(type_):
        return [_new_value(item, elem) for item in patch]
    if not all(isinstance(item, dict) for item in [*original, *patch]):
        return _ordered(_unique([*original, *patch]), patch, original, None)
    key = type_.patch_merge_key
    if not key:
        raise PatchError("cannot merge lists without merge key")
    items, replace = [], False
    for item in patch:
        directive = item.get(_PATCH)
        if directive is None:
            items.append(item)
        elif directive == "delete":
            original = [o for o in original if not same(o.get(key), _merge_key(item, key))]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise PatchError("merging lists cannot yet be specified in the patch")
        else:
            raise PatchError(f"unknown patch type: {directive} in map: {item}")
    if replace:
        return [_new_value(item, elem) for item in items]
    return _ordered(_merge_keyed(list(original), items, key, elem), items, original, key)


def _merge_key(item: dict[str, Any], key: str) -> Any:
    if key not in item:
        raise PatchError(f"map: {item} does not contain declared merge key: {key}")
    return item[key]


def _merge_keyed(original: list[Any], items: list[dict[str, Any]], key: str, elem: TypeNode) -> list[Any]:
    for item in items:
        value = _merge_key(item, key)
        index = next((i for i, o in enumerate(original) if same(o.get(key), value)), None)
        if index is None:
            original.append(_new_value(item, elem))
        else:
            original[index] = _merge_map(original[index], item, elem)
    return original


def _unique(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if not any(same(value, seen) for seen in out):
            out.append(value)
    return out


def _ordered(merged: list[Any], order: list[Any], live: list[Any], key: str | None) -> list[Any]:
    """`$setElementOrder`: listed items in the listed order, the others interleaved by their live order."""
    def ident(item: Any) -> Any:
        return item.get(key) if key and isinstance(item, dict) else item

    def position(items: list[Any], item: Any) -> int:
        return next((i for i, other in enumerate(items) if same(ident(other), ident(item))), -1)

    listed = sorted((m for m in merged if position(order, m) >= 0), key=lambda m: position(order, m))
    others = [m for m in merged if position(order, m) < 0]
    out: list[Any] = []
    while listed or others:
        if listed and others:
            left, right = position(live, others[0]), position(live, listed[0])
            take_other = left >= 0 and right >= 0 and left < right
        else:
            take_other = bool(others)
        out.append(others.pop(0) if take_other else listed.pop(0))
    return out
