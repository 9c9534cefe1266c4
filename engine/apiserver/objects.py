"""Small helpers on JSON objects: copying, paths, metadata access and timestamps."""

from __future__ import annotations

import datetime
import json
import os
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from engine.jsoncopy import copy_json as copy_json  # its callers in the API server import it from here

JsonDict = dict[str, Any]


_PACK = msgspec.msgpack.Encoder()
_JSON = msgspec.json.Encoder()


def json_bytes(value: Any) -> bytes:
    """Compact JSON (UTF-8, as Go writes it) through msgspec, in C; json.dumps where msgspec would write null
    for NaN or an infinity or refuses the value (a bool key, an integer beyond 64 bits). A value with a null in it
    is written by json.dumps, as it always was, only when it also holds a float or a non-ASCII character (where
    the two write different bytes, and where NaN hides)."""
    try:
        encoded = _JSON.encode(value)
    except (TypeError, ValueError, OverflowError):
        return json.dumps(value, separators=(",", ":")).encode()
    if b"null" in encoded and (not encoded.isascii() or _may_hold_float(value)):
        return json.dumps(value, separators=(",", ":")).encode()
    return encoded


def _may_hold_float(value: Any) -> bool:
    """Whether a float may be in `value`: msgspec writes every float as a MessagePack float64 (marker 0xcb); a
    string's bytes may hold that marker too, which only sends the value the slower way."""
    try:
        return b"\xcb" in _PACK.encode(value)
    except (TypeError, ValueError, OverflowError):
        return True


def meta(obj: JsonDict) -> JsonDict:
    """The object's metadata, created empty if missing or not a map."""
    m = obj.get("metadata")
    if not isinstance(m, dict):
        m = obj["metadata"] = {}
    return m


def meta_view(obj: JsonDict) -> JsonDict:
    """The metadata for reading; empty when missing or not a map (never changes the object)."""
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def name_of(obj: JsonDict) -> str:
    return str(meta_view(obj).get("name") or "")


def namespace_of(obj: JsonDict) -> str:
    return str(meta_view(obj).get("namespace") or "")


def rv_of(obj: JsonDict) -> str:
    return str(meta_view(obj).get("resourceVersion") or "")


def uid_of(obj: JsonDict) -> str:
    return str(meta_view(obj).get("uid") or "")


def finalizers_of(obj: JsonDict) -> list[str]:
    value = meta_view(obj).get("finalizers") or []
    return [str(f) for f in value] if isinstance(value, list) else []


def is_terminating(obj: JsonDict) -> bool:
    return bool(meta_view(obj).get("deletionTimestamp"))


def owner_refs(obj: JsonDict) -> list[JsonDict]:
    refs = meta_view(obj).get("ownerReferences") or []
    return [r for r in refs if isinstance(r, dict)] if isinstance(refs, list) else []


def format_time(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_LAST_SECOND: list[tuple[int, str]] = [(-1, "")]  # the last second formatted, and its text


def now() -> str:
    """The current time as the API writes it: RFC 3339, UTC, seconds (formatted once per second)."""
    second = int(time.time())
    last = _LAST_SECOND[0]
    if last[0] == second:
        return last[1]
    text = format_time(datetime.datetime.fromtimestamp(second, datetime.UTC))
    _LAST_SECOND[0] = (second, text)
    return text


def parse_time(text: str) -> datetime.datetime | None:
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)


def split_path(path: str) -> list[str]:
    """`.spec.replicas` → ["spec", "replicas"] (the simple JSON paths of CRD scale and printer columns)."""
    return [p for p in path.strip().lstrip(".").split(".") if p]


def get_path(obj: Any, path: Sequence[str]) -> Any:
    for part in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def set_path(obj: JsonDict, path: Sequence[str], value: Any) -> None:
    for part in path[:-1]:
        child = obj.get(part)
        if not isinstance(child, dict):
            child = obj[part] = {}
        obj = child
    obj[path[-1]] = value


def without(obj: JsonDict, *keys: str) -> JsonDict:
    return {k: v for k, v in obj.items() if k not in keys}


def sort_key(obj: JsonDict) -> tuple[str, str]:
    return namespace_of(obj), name_of(obj)


def first(items: Sequence[Any], predicate: Callable[[Any], bool]) -> Any:
    return next((i for i in items if predicate(i)), None)


class _Uids:
    """Random (version 4) UUIDs for new objects, from a generator seeded by the OS: uuid.uuid4 reads
    os.urandom each time, a system call that lets other threads take the GIL in the middle of every create.
    Seeded again in a forked child, so two processes never hand out the same uids."""

    def __init__(self) -> None:
        self._random = random.Random()
        os.register_at_fork(after_in_child=self._random.seed)

    def new(self) -> str:
        bits = self._random.getrandbits(128) & ~(0xF000 << 64 | 0xC000 << 48) | (0x4000 << 64 | 0x8000 << 48)
        text = f"{bits:032x}"  # version 4, RFC 4122 variant: what str(uuid.UUID(int=..., version=4)) writes
        return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


new_uid = _Uids().new
