"""What a runner wrote: a watch event showing no version after its own write brings the writing Instance no news."""

from __future__ import annotations

import threading
from collections.abc import Mapping
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
    """

    def __init__(self) -> None:
        self._versions: dict[Ref, tuple[int, str]] = {}  # ref -> (version written, the key of the Instance)
        self._pending: dict[str, list[Ref]] = {}  # Instance key -> refs its pass in progress wrote
        self._heard: set[str] = set()  # keys whose pass in progress had an event taken for an echo
        self._lock = threading.Lock()

    def wrote(self, obj: Mapping[str, Any], key: str) -> None:
        """Note that the pass of Instance `key` wrote `obj` (as the server answered)."""
        version = version_of(obj)
        if version is None:
            return
        ref = Ref.of(obj)
        with self._lock:
            self._versions[ref] = (version, key)
            self._pending.setdefault(key, []).append(ref)

    def settled(self, key: str, settled: bool) -> bool:
        """End the pass of `key`: its notes are kept when it settled, else dropped. True: another pass is owed."""
        with self._lock:
            refs = self._pending.pop(key, [])
            heard = key in self._heard
            self._heard.discard(key)
            if settled:
                return False
            for ref in refs:
                if (self._versions.get(ref) or (0, ""))[1] == key:
                    del self._versions[ref]
            return heard

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
