"""What the process runtime's containers printed: per pod uid and container, the current run and the one before.

The dev cluster's API server answers `pods/log` from a `LogStore` (it reads through `get`, `lines` and `wait`,
see engine/apiserver/podlogs.py); the runtime writes through `open`, `write` and `close`. Each run keeps at most
`limit` bytes: what a container prints beyond that is read and dropped, and one line says so.
"""

from __future__ import annotations

import datetime
import threading
from collections.abc import Sequence

Line = tuple[str, bytes]  # RFC 3339 time with nanoseconds, the line's bytes (with its newline)
PARTIAL = 16 * 1024  # a line longer than this is recorded in pieces, as the kubelet splits long lines


def now_nano() -> str:
    moment = datetime.datetime.now(datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f") + "000Z"


class ContainerLog:
    """One run of one container: lines as they are printed, until `close`."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._size = 0
        self._lines: list[Line] = []
        self._pending: dict[str, bytes] = {}  # per stream, the start of a line not yet ended
        self._closed = False
        self._truncated = False
        self._changed = threading.Condition()

    def write(self, stream: str, data: bytes) -> None:
        """Record bytes a stream printed; complete lines become visible at once."""
        with self._changed:
            buffered = self._pending.get(stream, b"") + data
            *complete, rest = buffered.split(b"\n")
            for line in complete:
                self._add(line + b"\n")
            while len(rest) > PARTIAL:
                self._add(rest[:PARTIAL])
                rest = rest[PARTIAL:]
            self._pending[stream] = rest
            self._changed.notify_all()

    def _add(self, text: bytes) -> None:
        if self._truncated:
            return
        if self._size + len(text) > self._limit:
            self._truncated = True
            text = f"[kplan process runtime: output beyond {self._limit} bytes was dropped]\n".encode()
        self._size += len(text)
        self._lines.append((now_nano(), text))

    def close(self) -> None:
        with self._changed:
            for rest in self._pending.values():
                if rest:
                    self._add(rest)
            self._pending.clear()
            self._closed = True
            self._changed.notify_all()

    def lines(self, start: int = 0) -> tuple[Sequence[Line], bool]:
        with self._changed:
            return list(self._lines[start:]), self._closed

    def text(self) -> str:
        """Everything recorded, as text."""
        lines, _ = self.lines()
        return b"".join(t for _, t in lines).decode("utf-8", errors="replace")

    def wait(self, start: int, timeout: float) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self._closed or len(self._lines) > start, timeout)


class LogStore:
    """The runs of every container the runtime started, by pod uid and container name."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._runs: dict[tuple[str, str], tuple[ContainerLog, ContainerLog | None]] = {}

    def open(self, uid: str, container: str) -> ContainerLog:
        """A new run of the container; the current one becomes the previous."""
        log = ContainerLog(self.limit)
        with self._lock:
            current = self._runs.get((uid, container))
            self._runs[(uid, container)] = (log, current[0] if current else None)
        return log

    def get(self, uid: str, container: str, previous: bool) -> ContainerLog | None:
        with self._lock:
            runs = self._runs.get((uid, container))
        if runs is None:
            return None
        return runs[1] if previous else runs[0]

    def forget(self, uid: str) -> None:
        with self._lock:
            for key in [k for k in self._runs if k[0] == uid]:
                del self._runs[key]
