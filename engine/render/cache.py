"""Compiled template code kept between renders, so each template source is compiled once."""

from __future__ import annotations

import threading
from collections import OrderedDict

from jinja2 import Environment
from jinja2.bccache import Bucket, BytecodeCache

__all__ = ["CompiledTemplates"]


class CompiledTemplates(BytecodeCache):
    """A bounded, thread-safe, in-memory cache of compiled templates, keyed by name and source.

    Renders build a fresh environment each time (it holds the render's budget); pass one of
    these to the render functions to skip recompiling the same templates on every render.
    """

    def __init__(self, capacity: int = 1024) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get_bucket(self, environment: Environment, name: str, filename: str | None, source: str) -> Bucket:
        checksum = self.get_source_checksum(source)
        bucket = Bucket(environment, f"{name}\0{checksum}", checksum)
        self.load_bytecode(bucket)
        return bucket

    def load_bytecode(self, bucket: Bucket) -> None:
        with self._lock:
            code = self._entries.get(bucket.key)
            if code is not None:
                self._entries.move_to_end(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        code = bucket.bytecode_to_string()
        with self._lock:
            self._entries[bucket.key] = code
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
