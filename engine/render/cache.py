"""Compiled template code kept between renders, so each template source is compiled once."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

from jinja2 import Environment
from jinja2.bccache import Bucket, BytecodeCache

__all__ = ["COMPILED", "CompiledTemplates", "Lru"]

V = TypeVar("V")


class Lru(Generic[V]):
    """A bounded, thread-safe map that forgets its least recently used entry first."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: Hashable, value: V) -> None:
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


class CompiledTemplates(BytecodeCache):
    """A bounded, thread-safe, in-memory cache of compiled templates, keyed by name and source.

    Pass one of these to the render functions to skip recompiling the same templates on every
    render. It also keeps idle environments (an environment holds one render's budget, so it
    serves one caller at a time): a render takes one that serves the same templates under the
    same limits, with the templates it loaded, and gives it back when done.
    """

    IDLE_PER_KEY = 4  # idle environments kept for one set of templates and limits

    def __init__(self, capacity: int = 1024, environments: int = 64) -> None:
        self._entries: Lru[bytes] = Lru(capacity)
        self._idle: Lru[list[Environment]] = Lru(environments)
        self._idle_lock = threading.Lock()

    def take_environment(self, key: Hashable) -> Environment | None:
        """An idle environment kept under `key`, now the caller's alone; None when there is none."""
        with self._idle_lock:
            idle = self._idle.get(key)
            return idle.pop() if idle else None

    def keep_environment(self, key: Hashable, environment: Environment) -> None:
        """Give back an environment taken or built for `key` (dropped when enough are idle)."""
        with self._idle_lock:
            idle = self._idle.get(key)
            if idle is None:
                self._idle.put(key, [environment])
            elif len(idle) < self.IDLE_PER_KEY:
                idle.append(environment)

    def get_bucket(self, environment: Environment, name: str, filename: str | None, source: str) -> Bucket:
        checksum = self.get_source_checksum(source)
        bucket = Bucket(environment, f"{name}\0{checksum}", checksum)
        self.load_bytecode(bucket)
        return bucket

    def load_bytecode(self, bucket: Bucket) -> None:
        code = self._entries.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: Bucket) -> None:
        self._entries.put(bucket.key, bucket.bytecode_to_string())

    def clear(self) -> None:
        self._entries.clear()
        with self._idle_lock:
            self._idle.clear()

    def __len__(self) -> int:
        return len(self._entries)


# The process's compiled templates: package verification compiles every template to check it, and keeps the code
# here for the renders of the planner (engine.planner.rendering), which would compile each again.
COMPILED = CompiledTemplates()
