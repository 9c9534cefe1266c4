"""The Instances a runner wrote: a watch event showing no version after its last write brings it no news."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from engine.planner import Ref
from engine.runner.observed import version_of

__all__ = ["Echoes"]


class Echoes:
    """The resourceVersion of each Instance as this runner's last write to it returned it.

    Every write to an Instance is made under the resourceVersion its pass read, so every version up to the one
    written was in view of a pass: the watch event of such a version (the write's own echo, or an older one that
    arrives late) calls for no pass of that Instance.
    """

    def __init__(self) -> None:
        self._versions: dict[Ref, int] = {}
        self._lock = threading.Lock()

    def wrote(self, obj: Mapping[str, Any]) -> None:
        version = version_of(obj)
        if version is None:
            return
        with self._lock:
            ref = Ref.of(obj)
            self._versions[ref] = max(version, self._versions.get(ref, version))

    def heard(self, change: str, obj: Mapping[str, Any]) -> bool:
        """Whether `change` of `obj` is an echo of this runner's own writes (a deletion never is, and is forgotten)."""
        ref = Ref.of(obj)
        with self._lock:
            if change == "DELETED":
                self._versions.pop(ref, None)
                return False
            written, version = self._versions.get(ref), version_of(obj)
        return written is not None and version is not None and version <= written
