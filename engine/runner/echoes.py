"""What a runner wrote: a watch event showing no version after its own write brings the writing Instance no news."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from engine.planner import Ref
from engine.runner.observed import version_of

__all__ = ["Echoes"]


class Echoes:
    """The resourceVersion of each object (the Instance itself, what it applied) as a pass of an Instance last
    wrote it, kept once that pass settled: deciding again with what it wrote in view starts nothing new.

    Every write to an Instance is made under the resourceVersion its pass read, and an apply's answer is what the
    pass went on to decide with, so every version up to the one written was in view of the pass: the watch event of
    such a version (the write's own echo, or an older one that arrives late) calls for no pass of that Instance.
    Writes are noted as they are made (their events often arrive before the pass ends); a pass that does not
    settle drops its notes, and is owed another pass when an event was taken for an echo meanwhile.

    The event of a write may even arrive before the write's answer: so an event of an Instance whose pass is under
    way (or of what it owns) waits for the pass to end (`defer`), which then tells it from news by what it wrote.
    """

    def __init__(self) -> None:
        self._versions: dict[Ref, tuple[int, str]] = {}  # ref -> (version written, the key of the Instance)
        self._pending: dict[str, list[Ref]] = {}  # Instance key -> refs its pass in progress wrote
        self._heard: set[str] = set()  # keys whose pass in progress had an event taken for an echo
        self._deferred: dict[str, list[tuple[Ref, int]]] = {}  # key -> events that arrived during its pass
        self._lock = threading.Lock()

    def begin(self, key: str) -> None:
        """A pass of Instance `key` starts (`settled` ends it)."""
        with self._lock:
            self._pending.setdefault(key, [])

    def wrote(self, obj: Mapping[str, Any], key: str) -> None:
        """Note that the pass of Instance `key` wrote `obj` (as the server answered)."""
        version = version_of(obj)
        if version is None:
            return
        ref = Ref.of(obj)
        with self._lock:
            self._versions[ref] = (version, key)
            self._pending.setdefault(key, []).append(ref)

    def settled(self, key: str, settled: bool, *, failed: bool = False) -> bool:
        """End the pass of `key`: its notes are kept when it settled, else dropped. True: another pass is owed (after
        a pass that `failed`, which is retried anyway, only for news: an event deferred that it did not write)."""
        with self._lock:
            refs = self._pending.pop(key, [])
            heard = key in self._heard
            self._heard.discard(key)
            deferred = self._deferred.pop(key, [])
            news = [(ref, version) for ref, version in deferred if not self._echo_of(key, ref, version)]
            if settled:
                return bool(news)
            for ref in refs:
                if (self._versions.get(ref) or (0, ""))[1] == key:
                    del self._versions[ref]
            return bool(news) if failed else heard or bool(deferred)

    def defer(self, change: str, obj: Mapping[str, Any], keys: Iterable[str]) -> set[str]:
        """Those of `keys` (the Instances event `change` of `obj` concerns) whose pass is under way: the event is
        noted for the end of that pass (`settled`: another pass is owed unless the event was an echo of it) and
        needs no pass now. A deletion, or an object without a numbered version, is never deferred."""
        version = version_of(obj)
        if change == "DELETED" or version is None:
            return set()
        ref = Ref.of(obj)
        with self._lock:
            found = {key for key in keys if key in self._pending}
            for key in found:
                self._deferred.setdefault(key, []).append((ref, version))
        return found

    def _echo_of(self, key: str, ref: Ref, version: int) -> bool:
        """Whether `version` of `ref` shows nothing after what the pass of `key` wrote (the echo itself is
        forgotten, as in `heard`)."""
        written = self._versions.get(ref)
        if written is None or written[1] != key or version > written[0]:
            return False
        if version == written[0]:
            del self._versions[ref]
        return True

    def heard(self, change: str, obj: Mapping[str, Any]) -> str | None:
        """The key of the Instance whose own write `change` of `obj` echoes, or None (a deletion never does)."""
        ref = Ref.of(obj)
        with self._lock:
            if change == "DELETED":
                self._versions.pop(ref, None)
                return None
            written, version = self._versions.get(ref), version_of(obj)
            if written is None or version is None or version > written[0]:
                return None
            if written[1] in self._pending:
                self._heard.add(written[1])
            elif version == written[0]:
                del self._versions[ref]  # the echo came: what is left to hear is older, rare, and may pass
            return written[1]
